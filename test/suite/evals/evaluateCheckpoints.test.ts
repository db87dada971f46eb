// "Tinker: Evaluate Checkpoints" end to end on the embedded engine: a tiny SFT run saves two sampler
// checkpoints; the command writes the eval spec next to the dataset, runs it through runEval (real
// HTTP to the engine, the real Python grader) and opens the results panel, whose snapshot has the
// base model (the baseline) and both checkpoints at their steps, with the paired comparisons.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import type { SftRunResult } from '../../../src/core/runs/runEvents';
import type { EvalOutcome } from '../../../src/vscode/evals/evalRunner';
import { useLocalEngineAndRunsFolder, waitFor } from '../helpers';

suite('Evaluate Checkpoints', function () {
  this.timeout(240_000);
  const suiteState = useLocalEngineAndRunsFolder('tinker-evaluate-');
  let api: TinkerStudioTestHandles;
  let dir: string;

  suiteSetup(() => {
    api = suiteState.api();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-evaluate-spec-'));
  });
  suiteTeardown(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('two checkpoints of a tiny run against the base model, spec written next to the dataset, panel opened', async () => {
    const chats = Array.from({ length: 16 }, (_, i) => JSON.stringify({ messages: [{ role: 'user', content: `What is ${i} + 2?` }, { role: 'assistant', content: String(i + 2) }] }));
    fs.writeFileSync(path.join(dir, 'chats.jsonl'), chats.join('\n') + '\n');
    const spec = { name: 'eval-source', backend: 'local', model: 'tinker-studio/arith-gpt', renderer: 'chatml', lora_rank: 4, learning_rate: 0.004, batch_size: 4, max_steps: 2, eval_every: 0, save_every: 1, dataset: { path: 'chats.jsonl' } };
    fs.writeFileSync(path.join(dir, 'eval-source.sft.json'), JSON.stringify(spec));
    const run = await vscode.commands.executeCommand<SftRunResult>('tinker.startSftRun', vscode.Uri.file(path.join(dir, 'eval-source.sft.json')));
    assert.ok(run && run.status === 'completed', run?.error);
    const summary = await waitFor('the run with its checkpoints', async () => (await api.runs.list()).find((r) => r.dir === run.runDir && r.checkpoints.filter((c) => c.sampler_path).length >= 2));
    const names = summary.checkpoints.filter((c) => c.sampler_path).slice(0, 2).map((c) => c.name);

    const holdout = Array.from({ length: 6 }, (_, i) => JSON.stringify({ question: `What is ${i} + 2?`, answer: i + 2 }));
    const dataset = path.join(dir, 'holdout.jsonl');
    fs.writeFileSync(dataset, holdout.join('\n') + '\n');
    const grader = path.join(dir, 'reward.py');
    fs.copyFileSync(path.join(__dirname, '../../../../examples/arithmetic/reward.py'), grader);

    const outcome = await vscode.commands.executeCommand<EvalOutcome>('tinker.evaluateCheckpoints', { runDir: run.runDir, model: 'tinker-studio/arith-gpt', checkpoints: names, dataset, grader, n: 2, max_tokens: 8 });
    assert.ok(outcome, 'the command reports its outcome');
    assert.strictEqual(outcome.cancelled, false);
    const specFile = path.join(dir, 'holdout-checkpoints.eval.json');
    const written = JSON.parse(fs.readFileSync(specFile, 'utf8'));
    assert.deepStrictEqual(written.dataset, { path: 'holdout.jsonl', prompt_field: 'question', ground_truth_field: 'answer' });
    assert.deepStrictEqual(written.targets, ['tinker-studio/arith-gpt', { run: path.relative(dir, run.runDir).split(path.sep).join('/'), checkpoints: names }]);
    assert.strictEqual(outcome.dir, path.join(dir, 'evals', 'holdout-checkpoints'));
    assert.ok(outcome.summary);
    assert.strictEqual(outcome.summary.targets.length, 3);
    assert.strictEqual(outcome.summary.complete, true);
    assert.deepStrictEqual(outcome.summary.targets.map((t) => t.samples), [12, 12, 12]);

    const panel = api.evals.get({ dir: outcome.dir });
    assert.ok(panel, 'the results panel opened at the end');
    const snap = await waitFor('the panel snapshot', () => panel.snapshot);
    assert.strictEqual(snap.targets.length, 3);
    assert.strictEqual(snap.baseline, 0);
    assert.strictEqual(snap.targets[0]!.source?.kind, 'base');
    assert.ok(snap.targets.slice(1).every((t) => t.source?.kind === 'checkpoint'));
    assert.strictEqual(snap.problems.length, 6);
    assert.strictEqual(snap.comparisons.filter(Boolean).length, 2);
  });
});
