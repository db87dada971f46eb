// GRPO runs owned by the extension host, on the embedded local engine: Start GRPO Run on a spec,
// the guided flow, the status bar while it runs, the Runs and Checkpoints views afterwards, the spec's
// CodeLenses, Cancel and Resume, and a failure that must not escape the command.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { GrpoRunResult } from '../../../src/core/runs/runEvents';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { checkpointNames, loggedSteps, writeTinySpec } from './grpoFixtures';
import { Redactor } from '../../../src/core/config/redact';
import { Log } from '../../../src/vscode/common/log';
import { metricsPanels } from '../../../src/vscode/metrics/metricsPanels';
import { ToWebview } from '../../../src/protocol/metricsProtocol';
import { EXTENSION_ID, useLocalEngineAndRunsFolder, waitFor } from '../helpers';
import { TransportRecorder } from '../common/recordingTransport';

const RUN_TIMEOUT = 240_000;

suite('GRPO runs from the extension host', function () {
  this.timeout(RUN_TIMEOUT);
  const suiteState = useLocalEngineAndRunsFolder('tinker-grpo-runs-');
  let api: TinkerStudioTestHandles;
  let runsDir: string;

  suiteSetup(() => {
    api = suiteState.api();
    runsDir = suiteState.runsDir();
  });

  suiteTeardown(async () => {
    const c = vscode.workspace.getConfiguration('tinker');
    await c.update('pythonPath', undefined, vscode.ConfigurationTarget.Global);
  });

  let finished: GrpoRunResult | undefined;
  let specFile: string;

  test('Start GRPO Run on a spec trains on the local engine, shows progress in the status bar, and writes the cookbook layout', async () => {
    specFile = writeTinySpec({ name: 'tiny' });
    const statusTexts: string[] = [];
    const sub = api.registry.onDidChange(() => {
      const t = api.runStatus.text;
      if (t) statusTexts.push(t);
    });
    try {
      finished = await vscode.commands.executeCommand<GrpoRunResult>('tinker.startGrpoRun', vscode.Uri.file(specFile));
    } finally {
      sub.dispose();
    }
    assert.ok(finished, 'the command returns the run result');
    assert.strictEqual(finished.status, 'completed', finished.error);
    assert.strictEqual(finished.iterationsRun, 2);
    assert.strictEqual(path.dirname(finished.runDir), runsDir, 'the run directory is in the runs folder');
    for (const f of ['config.json', 'metrics.jsonl', 'checkpoints.jsonl', 'iteration_000000/train_samples.jsonl']) {
      assert.ok(fs.existsSync(path.join(finished.runDir, f)), `${f} is written`);
    }
    assert.deepStrictEqual(loggedSteps(finished.runDir), [0, 1]);
    assert.ok(checkpointNames(finished.runDir).includes('final'), 'a final checkpoint is recorded');
    assert.ok(statusTexts.some((t) => /GRPO tiny: iteration 1\/2/.test(t)), `status bar showed iteration 1/2 (saw ${statusTexts.slice(0, 3).join(' | ')})`);
    assert.ok(statusTexts.some((t) => /iteration 2\/2 · (sampling|rewards|training|eval)/.test(t)), 'status bar showed the phase of iteration 2/2');
    assert.strictEqual(api.runStatus.text, undefined, 'the status bar item is hidden when nothing runs');
  });

  test('the Runs view shows the finished run as completed, with its last iteration and reward', async () => {
    assert.ok(finished);
    const row = await waitFor('the run in the Runs view', async () => (await api.runsTree.localRuns()).find((r) => r.run.dir === finished!.runDir));
    assert.strictEqual(row.status, 'completed');
    const item = api.runsTree.getTreeItem(row);
    assert.match(String(item.description), /^iteration 1 · reward \d\.\d{3} · completed$/);
    assert.strictEqual(item.contextValue, 'tinker.run:done');
    assert.deepStrictEqual(item.command?.arguments, [finished.runDir], 'clicking the row opens its metrics');
  });

  test('the Checkpoints view lists the run’s checkpoints, each with state and sampler tinker:// paths and a time', async () => {
    assert.ok(finished);
    const runNode = await waitFor('the run in the Checkpoints view', async () =>
      (await api.checkpointsTree.getChildren()).find((n) => n.kind === 'run' && n.run.dir === finished!.runDir),
    );
    const ckpts = await api.checkpointsTree.getChildren(runNode);
    const final = ckpts.find((n) => n.kind === 'checkpoint' && n.checkpoint.name === 'final');
    assert.ok(final && final.kind === 'checkpoint', 'the final checkpoint is listed');
    assert.match(String(api.checkpointsTree.getTreeItem(final).description), /\d{4}-\d\d-\d\d \d\d:\d\d/, 'the newest checkpoint shows a time');
    const paths = await api.checkpointsTree.getChildren(final);
    const kinds = paths.map((p) => (p.kind === 'path' ? p.which : p.kind));
    assert.ok(kinds.includes('sampler'), `sampler entry listed (got ${kinds.join(', ')})`);
    for (const p of paths) {
      assert.ok(p.kind === 'path');
      assert.match(p.tinkerPath, /^tinker:\/\//);
      const item = api.checkpointsTree.getTreeItem(p);
      assert.ok(String(item.description).endsWith(p.tinkerPath), `the row ends with its path (got ${String(item.description)})`);
      assert.match(String(item.contextValue), new RegExp(`^tinker\\.checkpointPath ${p.which} `));
      const copied = await vscode.commands.executeCommand<string>('tinker.copyCheckpointPath', p);
      assert.strictEqual(copied, p.tinkerPath);
      assert.strictEqual(await vscode.env.clipboard.readText(), p.tinkerPath);
    }
  });

  test('the spec shows a "Start run" CodeLens on its first line', async () => {
    const doc = await vscode.workspace.openTextDocument(specFile);
    await vscode.window.showTextDocument(doc);
    const lenses = await waitFor('the CodeLenses', async () => {
      const l = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri);
      return l && l.length > 0 ? l : undefined;
    });
    const start = lenses.find((l) => l.command?.command === 'tinker.startGrpoRun');
    assert.ok(start, 'Start run lens');
    assert.strictEqual(start.range.start.line, 0);
    assert.match(start.command!.title, /Start run/);
    assert.ok(!lenses.some((l) => l.command?.command === 'tinker.resumeRun'), 'no Resume lens: the only run of this spec is complete');
  });

  test('Cancel Run stops a run cleanly; the CodeLens then offers Resume, and Resume finishes it without repeating an iteration', async () => {
    const longSpec = writeTinySpec({ name: 'cancel-me', iterations: 6, holdout: false });
    const started = Promise.resolve(vscode.commands.executeCommand<GrpoRunResult>('tinker.startGrpoRun', longSpec));
    const run = await waitFor(
      'the first iteration to be logged',
      () => api.registry.active().find((r) => r.specFile === longSpec && r.runDir && fs.existsSync(path.join(r.runDir, 'metrics.jsonl')) && loggedSteps(r.runDir).length >= 1),
      RUN_TIMEOUT / 2,
    );
    assert.ok(await vscode.commands.executeCommand<boolean>('tinker.cancelRun', run.runDir), 'the command found the run');
    const result = await started;
    assert.ok(result);
    assert.strictEqual(result.status, 'cancelled');
    const runDir = result.runDir;
    const stepsBefore = loggedSteps(runDir);
    assert.ok(stepsBefore.length >= 1 && stepsBefore.length < 6, `stopped part-way (steps ${stepsBefore.join(',')})`);
    assert.ok(!checkpointNames(runDir).includes('final'));

    const row = await waitFor('the cancelled run in the Runs view', async () => (await api.runsTree.localRuns()).find((r) => r.run.dir === runDir && r.status === 'cancelled'));
    assert.strictEqual(api.runsTree.getTreeItem(row).contextValue, 'tinker.run:resumable');

    const doc = await vscode.workspace.openTextDocument(longSpec);
    const resume = await waitFor('a Resume run lens', async () => {
      const l = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri);
      return l?.find((x) => x.command?.command === 'tinker.resumeRun');
    });
    assert.deepStrictEqual(resume.command!.arguments?.[0], runDir);

    const resumed = await vscode.commands.executeCommand<GrpoRunResult>('tinker.resumeRun', ...(resume.command!.arguments ?? []));
    assert.ok(resumed);
    assert.strictEqual(resumed.status, 'completed', resumed.error);
    assert.strictEqual(resumed.runDir, runDir, 'the same directory is continued');
    assert.deepStrictEqual(loggedSteps(runDir), [0, 1, 2, 3, 4, 5], 'every iteration is logged once the run is done');
    assert.strictEqual(resumed.iterationsRun + stepsBefore.length, 6, 'no iteration ran twice');
    assert.ok(checkpointNames(runDir).includes('final'));
  });

  test('the guided flow, given its answers, writes an undoable spec file through a WorkspaceEdit and runs it', async () => {
    const dir = path.dirname(writeTinySpec({ name: 'unused' }));
    const target = path.join(dir, 'guided.grpo.json');
    const result = await vscode.commands.executeCommand<GrpoRunResult>('tinker.startGrpoRun', {
      guided: {
        model: 'tinker-studio/arith-gpt',
        renderer: 'chatml',
        dataset: path.join(dir, 'train.jsonl'),
        holdout: { path: path.join(dir, 'holdout.jsonl') },
        reward: path.join(dir, 'reward.py'),
        groupSize: 2,
        groupsPerBatch: 2,
        iterations: 1,
        maxTokens: 4,
        specFile: target,
      },
    });
    assert.ok(fs.existsSync(target), 'the spec file was written');
    const spec = JSON.parse(fs.readFileSync(target, 'utf8')) as Record<string, unknown>;
    assert.strictEqual(spec.model, 'tinker-studio/arith-gpt');
    assert.deepStrictEqual(spec.dataset, { path: 'train.jsonl', holdout: { path: 'holdout.jsonl' }, holdout_max: 200 });
    assert.deepStrictEqual(spec.reward, { file: 'reward.py' });
    assert.ok(result);
    assert.strictEqual(result.status, 'completed', result.error);
    assert.deepStrictEqual(loggedSteps(result.runDir), [0]);
  });

  test('a reward interpreter that does not exist fails the run with a clear error instead of throwing', async () => {
    await vscode.workspace.getConfiguration('tinker').update('pythonPath', '/nonexistent/python3', vscode.ConfigurationTarget.Global);
    try {
      const spec = writeTinySpec({ name: 'bad-python' });
      const result = await vscode.commands.executeCommand<GrpoRunResult>('tinker.startGrpoRun', spec);
      assert.ok(result, 'the command resolves with a result');
      assert.strictEqual(result.status, 'failed');
      assert.match(result.error ?? '', /nonexistent\/python3|python/i);
      assert.strictEqual(api.registry.active().length, 0, 'nothing is left running');
    } finally {
      await vscode.workspace.getConfiguration('tinker').update('pythonPath', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  test('a spec with an error is refused before anything starts, naming the field', async () => {
    const spec = writeTinySpec({ name: 'broken' });
    const obj = JSON.parse(fs.readFileSync(spec, 'utf8')) as Record<string, unknown>;
    obj.group_size = 1;
    fs.writeFileSync(spec, JSON.stringify(obj));
    const before = api.registry.all().length;
    const result = await vscode.commands.executeCommand<GrpoRunResult | undefined>('tinker.startGrpoRun', spec);
    assert.strictEqual(result, undefined);
    assert.strictEqual(api.registry.all().length, before, 'no run was registered');
  });

  test('the metrics panel of a running run receives each iteration as it is logged, and the run’s status', async () => {
    const ITERATIONS = 20;
    const spec = writeTinySpec({ name: 'live', iterations: ITERATIONS, holdout: false });
    // the run waits in its first reward call until the panel has shown it running: however fast the
    // engine is, the panel sees the run running and then receives each iteration as it is logged
    const gate = path.join(path.dirname(spec), 'go');
    fs.writeFileSync(
      path.join(path.dirname(spec), 'reward.py'),
      `import os, re, time\n\ndef compute_reward(completion, ground_truth):\n    deadline = time.time() + 240\n    while not os.path.exists(${JSON.stringify(gate)}) and time.time() < deadline:\n        time.sleep(0.05)\n    numbers = re.findall(r"-?\\d+", completion)\n    return 1.0 if numbers and int(numbers[-1]) == int(ground_truth) else 0.0\n`,
    );
    const specJson = JSON.parse(fs.readFileSync(spec, 'utf8')) as { reward: Record<string, unknown> };
    specJson.reward.timeout_ms = 300_000;
    fs.writeFileSync(spec, JSON.stringify(specJson, null, 2));
    const started = Promise.resolve(vscode.commands.executeCommand<GrpoRunResult>('tinker.startGrpoRun', spec));
    const run = await waitFor('the run directory', () => api.registry.active().find((r) => r.specFile === spec && r.runDir), RUN_TIMEOUT / 2);
    const log = new Log(new Redactor(), 'Tinker (test)');
    const recorder = new TransportRecorder();
    const extensionUri = vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri;
    const panels = metricsPanels({ extensionUri, log, registry: api.registry, openIteration: async () => false }, recorder.factory);
    const panel = await panels.open(run.runDir!);
    const steps = new Set<number>();
    const statuses: string[] = [];
    const sub = recorder.of(panel.panel).onDidSend((raw) => {
      const parsed = ToWebview.safeParse(raw);
      if (!parsed.success) return;
      const m = parsed.data;
      if (m.type === 'snapshot' || m.type === 'append') for (const r of m.rows) steps.add(r.step);
      if (m.type === 'snapshot' || m.type === 'run') statuses.push(m.run.status);
    });
    try {
      await waitFor('the panel showing the run running', () => statuses.includes('running'), 120_000);
      fs.writeFileSync(gate, '');
      const result = await started;
      assert.ok(result);
      assert.strictEqual(result.status, 'completed', result.error);
      await waitFor('every iteration in the panel', () => [...Array(ITERATIONS).keys()].every((s) => steps.has(s)), 30_000);
      await waitFor('the completed status in the panel', () => statuses.includes('completed'), 30_000);
      assert.ok(statuses.includes('running'), `the panel saw the run running (saw ${statuses.join(', ')})`);
    } finally {
      sub.dispose();
      panels.dispose();
      log.dispose();
    }
  });

  test('Cancel Run with nothing running says so and returns false', async () => {
    assert.strictEqual(await vscode.commands.executeCommand<boolean>('tinker.cancelRun'), false);
  });
});
