// Public benchmarks from the editor, in a real extension host on the embedded engine: "Copy Inspect
// Command" (the engine's OpenAI-compatible base, no key), "Import Inspect Log…" (an Inspect .eval log
// into the eval panel, and into a suite entry's result) and "Run Benchmark on Checkpoint…" with a
// template (a suite file with its product placeholder, written into the workspace's benchmarks/).
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import type { BenchmarkOutcome, CopiedInspectCommand, ImportedInspect } from '../../../src/vscode/evals/benchmarkCommands';
import { writeZip } from '../../../src/core/fs/zip';
import { useLocalEngineAndRunsFolder, waitFor, workspaceRoot } from '../helpers';
import { DatasetsServerStandIn } from '../../unit/evals/hubStandIn';

const CKPT = 'tinker://run-7/sampler_weights/final';

/** An Inspect log (its documented EvalLog schema) as a `.eval` ZIP: header.json and samples/<id>_epoch_<n>.json. */
function inspectEvalZip(): Buffer {
  const samples = [1, 2, 3, 4].map((id) => ({
    id,
    epoch: 1,
    input: `What is ${id} + ${id}?`,
    target: String(2 * id),
    output: { model: CKPT, choices: [{ message: { role: 'assistant', content: String(id === 3 ? 7 : 2 * id) }, stop_reason: 'stop' }] },
    scores: { match: { value: id === 3 ? 'I' : 'C', answer: String(2 * id) } },
  }));
  const header = {
    version: 2,
    status: 'success',
    eval: { task: 'inspect_evals/gsm8k', model: `openai/${CKPT}`, created: '2026-11-28T10:00:00+00:00', config: { epochs: 1 } },
    plan: { name: 'plan', steps: [] },
    results: { total_samples: 4, completed_samples: 4, scores: [{ name: 'match', scorer: 'match', metrics: {} }] },
    stats: { started_at: '2026-11-28T10:00:00+00:00', completed_at: '2026-11-28T10:01:00+00:00', model_usage: {} },
  };
  return writeZip([{ name: 'header.json', data: JSON.stringify(header) }, ...samples.map((s) => ({ name: `samples/${s.id}_epoch_1.json`, data: JSON.stringify(s) }))]);
}

suite('benchmarks from the editor: Copy Inspect Command, Import Inspect Log, Run Benchmark templates', function () {
  this.timeout(120_000);
  const state = useLocalEngineAndRunsFolder('tinker-bench-ui-');
  let api: TinkerStudioTestHandles;
  let dir: string;
  const written: string[] = [];

  suiteSetup(() => {
    api = state.api();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-bench-ui-files-'));
  });
  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    fs.rmSync(dir, { recursive: true, force: true });
    for (const f of written) fs.rmSync(f, { recursive: true, force: true });
  });

  test('Copy Inspect Command: inspect eval on the checkpoint through the engine’s /v1, without the key', async () => {
    const key = (await api.connection.openAiEndpoint({ withKey: true })).apiKey!;
    const copied = await vscode.commands.executeCommand<CopiedInspectCommand>('tinker.copyInspectCommand', { checkpoint: CKPT, task: 'gsm8k' });
    assert.ok(copied);
    assert.match(copied.baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    assert.strictEqual(copied.command, `inspect eval inspect_evals/gsm8k --model openai/${CKPT} --model-base-url ${copied.baseUrl}`);
    const clip = await vscode.env.clipboard.readText();
    assert.ok(clip.includes(copied.command), clip);
    assert.ok(!clip.includes(key), 'the engine’s key is never in the command');
    await vscode.env.clipboard.writeText('');
  });

  test('Import Inspect Log: a .eval log opens in the eval panel as a target with its accuracy', async () => {
    const log = path.join(dir, 'gsm8k.eval');
    fs.writeFileSync(log, inspectEvalZip());
    const r = await vscode.commands.executeCommand<ImportedInspect>('tinker.importInspectLog', { files: [log] });
    assert.ok(r && r.kind === 'eval');
    written.push(path.join(workspaceRoot(), 'benchmarks'));
    assert.strictEqual(r.dir, path.join(workspaceRoot(), 'benchmarks', 'evals', 'inspect-gsm8k'));
    const panel = api.evals.get({ dir: r.dir });
    assert.ok(panel, 'the eval panel shows the import');
    const snap = await waitFor('the snapshot', () => panel.snapshot, 30_000);
    assert.deepStrictEqual(snap.targets.map((t) => t.label), [CKPT]);
    assert.strictEqual(snap.problems.length, 4);
    assert.deepStrictEqual(snap.rewards[0], [1, 1, 0, 1]);
  });

  test('Import Inspect Log into a suite entry: the checkpoint’s suite result gets the entry, the suite panel opens on it', async () => {
    const log = path.join(dir, 'gsm8k-suite.eval');
    fs.writeFileSync(log, inspectEvalZip());
    const suiteFile = path.join(dir, 'chat.suite.json');
    fs.writeFileSync(suiteFile, JSON.stringify({ entries: [{ name: 'gsm8k', layer: 'benchmark', eval: { dataset: { path: 'p.jsonl' }, grader: { file: 'g.py' }, max_tokens: 8 } }] }));
    const r = await vscode.commands.executeCommand<ImportedInspect>('tinker.importInspectLog', { files: [log], suiteFile, entry: 'gsm8k' });
    assert.ok(r && r.kind === 'suite');
    assert.strictEqual(r.checkpoint, CKPT);
    const panel = api.suites.get({ suiteFile, checkpoints: [CKPT] });
    assert.ok(panel, 'the suite panel shows the checkpoint');
    const snap = await waitFor('the suite snapshot', () => panel.snapshot, 30_000);
    assert.match(JSON.stringify(snap), /"gsm8k"/);
    assert.match(JSON.stringify(snap), /0\.75/, 'pass@1 = 3 of 4');
  });

  test('Run Benchmark on Checkpoint with a benchmark: writes benchmarks/gsm8k.eval.json, runs it on the engine (rows from the datasets-server stand-in), the eval panel shows it', async () => {
    const hub = await new DatasetsServerStandIn().start();
    const before = process.env.TINKER_DATASETS_SERVER;
    // the hub loader's documented override: the extension host reads the stand-in's rows
    process.env.TINKER_DATASETS_SERVER = hub.url;
    try {
      const model = 'tinker-studio/arith-chat';
      const r = await vscode.commands.executeCommand<BenchmarkOutcome>('tinker.runBenchmarkOnCheckpoint', { checkpoint: model, benchmark: 'gsm8k', max_problems: 4 });
      written.push(path.join(workspaceRoot(), 'benchmarks'));
      assert.ok(r && r.kind === 'eval');
      assert.strictEqual(r.specFile, path.join(workspaceRoot(), 'benchmarks', 'gsm8k.eval.json'));
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(r.specFile, 'utf8')), { benchmark: 'gsm8k', max_problems: 4, seed: 0, backend: 'local', targets: [model] });
      assert.ok(r.outcome?.summary, 'the eval ran');
      assert.strictEqual(r.outcome.cancelled, false);
      const t = r.outcome.summary.targets[0]!;
      assert.deepStrictEqual([t.label, t.problems, t.samples], [model, 4, 4]);
      assert.ok(hub.requests.length > 0, 'the rows came from the stand-in');
      const panel = api.evals.get({ dir: r.outcome.dir });
      assert.ok(panel, 'the eval panel shows the benchmark');
      const snap = await waitFor('the snapshot', () => panel.snapshot, 30_000);
      assert.strictEqual(snap.problems.length, 4);
    } finally {
      if (before === undefined) delete process.env.TINKER_DATASETS_SERVER;
      else process.env.TINKER_DATASETS_SERVER = before;
      await hub.stop();
    }
  });

  test('Run Benchmark on Checkpoint with a template: the suite file and its product placeholder in benchmarks/, opened in the editor', async () => {
    const r = await vscode.commands.executeCommand<BenchmarkOutcome>('tinker.runBenchmarkOnCheckpoint', { checkpoint: CKPT, template: 'tools', max_problems: 20, productEval: null });
    assert.ok(r && r.kind === 'suite');
    const bench = path.join(workspaceRoot(), 'benchmarks');
    written.push(bench);
    assert.strictEqual(r.suiteFile, path.join(bench, 'tools-benchmarks.suite.json'));
    assert.deepStrictEqual(r.placeholders, [path.join(bench, 'tools-product.eval.json')]);
    const suite = JSON.parse(fs.readFileSync(r.suiteFile, 'utf8'));
    assert.deepStrictEqual(suite.entries, [
      { name: 'ifeval', layer: 'benchmark', eval: { benchmark: 'ifeval', max_problems: 20, seed: 0, backend: 'local' } },
      { name: 'product', layer: 'product', eval: 'tools-product.eval.json' },
    ]);
    assert.ok('env' in JSON.parse(fs.readFileSync(r.placeholders[0]!, 'utf8')), 'the tool environment is the product layer');
    assert.strictEqual(vscode.window.activeTextEditor?.document.uri.fsPath, r.suiteFile);
    // run again: the placeholder the user may have filled in is kept
    fs.writeFileSync(r.placeholders[0]!, '{"mine": true}');
    const again = await vscode.commands.executeCommand<BenchmarkOutcome>('tinker.runBenchmarkOnCheckpoint', { checkpoint: CKPT, template: 'tools', max_problems: 20, productEval: null });
    assert.ok(again && again.kind === 'suite');
    assert.deepStrictEqual(again.placeholders, []);
    assert.strictEqual(fs.readFileSync(r.placeholders[0]!, 'utf8'), '{"mine": true}');
  });
});
