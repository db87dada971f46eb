// SFT runs owned by the extension host, on the embedded local engine: Start SFT Run on a spec (status
// bar, run directory, Runs view), the spec's CodeLens, Cancel and Resume through the same commands as
// GRPO runs, and the guided flow given its answers.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { SftRunResult } from '../../../src/core/runs/runEvents';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { checkpointNames, loggedSteps } from './grpoFixtures';
import { useLocalEngineAndRunsFolder, waitFor } from '../helpers';

const RUN_TIMEOUT = 240_000;

/** A folder with chats.jsonl and <name>.sft.json; returns the spec path. */
function writeSftSpec(name: string, maxSteps: number): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-sft-spec-'));
  const chats = Array.from({ length: 24 }, (_, i) => {
    const b = (i * 7) % 10;
    return JSON.stringify({ messages: [{ role: 'user', content: `What is ${i} + ${b}?` }, { role: 'assistant', content: String(i + b) }] });
  });
  fs.writeFileSync(path.join(dir, 'chats.jsonl'), chats.join('\n') + '\n');
  const spec = { name, backend: 'local', model: 'tinker-studio/arith-gpt', renderer: 'chatml', lora_rank: 4, learning_rate: 0.004, batch_size: 4, max_steps: maxSteps, eval_every: 1, save_every: 0, dataset: { path: 'chats.jsonl', validation: { fraction: 0.25 } } };
  const file = path.join(dir, `${name}.sft.json`);
  fs.writeFileSync(file, JSON.stringify(spec, null, 2) + '\n');
  return file;
}

const metricsLines = (runDir: string) =>
  fs
    .readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, number>);

suite('SFT runs from the extension host', function () {
  this.timeout(RUN_TIMEOUT);
  const suiteState = useLocalEngineAndRunsFolder('tinker-sft-runs-');
  let api: TinkerStudioTestHandles;
  let runsDir: string;

  suiteSetup(() => {
    api = suiteState.api();
    runsDir = suiteState.runsDir();
  });

  test('Start SFT Run on a spec trains on the local engine, shows its steps in the status bar, and writes train and validation NLL', async () => {
    const specFile = writeSftSpec('tiny-sft', 3);
    const statusTexts: string[] = [];
    const sub = api.registry.onDidChange(() => {
      const t = api.runStatus.text;
      if (t) statusTexts.push(t);
    });
    let result: SftRunResult | undefined;
    try {
      result = await vscode.commands.executeCommand<SftRunResult>('tinker.startSftRun', vscode.Uri.file(specFile));
    } finally {
      sub.dispose();
    }
    assert.ok(result, 'the command returns the run result');
    assert.strictEqual(result.status, 'completed', result.error);
    assert.strictEqual(result.iterationsRun, 3);
    assert.strictEqual(path.dirname(result.runDir), runsDir);
    const lines = metricsLines(result.runDir);
    assert.deepStrictEqual(lines.map((l) => l.step), [0, 1, 2]);
    assert.ok(lines.every((l) => Number.isFinite(l.train_mean_nll) && Number.isFinite(l['test/nll'])), 'train_mean_nll and test/nll every step');
    assert.ok(checkpointNames(result.runDir).includes('final'));
    assert.ok(statusTexts.some((t) => /SFT tiny-sft: step \d\/3/.test(t)), `status bar showed the SFT step (saw ${statusTexts.slice(0, 3).join(' | ')})`);
    assert.strictEqual(api.runStatus.text, undefined, 'the status bar item is hidden when nothing runs');
    const row = await waitFor('the run in the Runs view', async () => (await api.runsTree.localRuns()).find((r) => r.run.dir === result!.runDir));
    assert.strictEqual(row.status, 'completed');

    const doc = await vscode.workspace.openTextDocument(specFile);
    const lenses = await waitFor('the CodeLenses', async () => {
      const l = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri);
      return l && l.length > 0 ? l : undefined;
    });
    const start = lenses.find((l) => l.command?.command === 'tinker.startSftRun');
    assert.ok(start, 'a Start run lens that starts an SFT run');
    assert.match(start.command!.title, /Start run/);
  });

  test('Cancel Run stops an SFT run; Resume Run continues it from its config.json as SFT, no step repeated', async () => {
    const specFile = writeSftSpec('cancel-sft', 8);
    const started = Promise.resolve(vscode.commands.executeCommand<SftRunResult>('tinker.startSftRun', specFile));
    const run = await waitFor(
      'the first step to be logged',
      () => api.registry.active().find((r) => r.specFile === specFile && r.runDir && fs.existsSync(path.join(r.runDir, 'metrics.jsonl')) && loggedSteps(r.runDir).length >= 1),
      RUN_TIMEOUT / 2,
    );
    assert.strictEqual(run.kind, 'sft');
    assert.ok(await vscode.commands.executeCommand<boolean>('tinker.cancelRun', run.runDir));
    const result = await started;
    assert.ok(result);
    assert.strictEqual(result.status, 'cancelled');
    const before = loggedSteps(result.runDir);
    assert.ok(before.length >= 1 && before.length < 8, `stopped part-way (steps ${before.join(',')})`);

    const resumed = await vscode.commands.executeCommand<SftRunResult>('tinker.resumeRun', result.runDir);
    assert.ok(resumed);
    assert.strictEqual(resumed.status, 'completed', resumed.error);
    assert.strictEqual(resumed.runDir, result.runDir);
    assert.ok(resumed.firstTrainNll !== undefined, 'resumed as an SFT run (train NLL reported)');
    assert.deepStrictEqual(loggedSteps(result.runDir), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.strictEqual(resumed.iterationsRun + before.length, 8, 'no step ran twice');
  });

  test('the guided flow, given its answers, writes a *.sft.json and runs it', async () => {
    const dir = path.dirname(writeSftSpec('unused-sft', 1));
    const target = path.join(dir, 'guided.sft.json');
    const result = await vscode.commands.executeCommand<SftRunResult>('tinker.startSftRun', {
      guided: { model: 'tinker-studio/arith-gpt', dataset: path.join(dir, 'chats.jsonl'), validation: 'none', batchSize: 4, maxSteps: 2, specFile: target },
    });
    assert.ok(result);
    assert.strictEqual(result.status, 'completed', result.error);
    const written = JSON.parse(fs.readFileSync(target, 'utf8')) as Record<string, unknown>;
    assert.strictEqual(written.model, 'tinker-studio/arith-gpt');
    assert.deepStrictEqual(written.dataset, { path: 'chats.jsonl' });
    assert.strictEqual(written.max_steps, 2);
    assert.deepStrictEqual(loggedSteps(result.runDir), [0, 1]);
  });
});
