// Environment specs (`env` instead of `reward`) in the extension host, on the embedded local engine
// (tinker-studio/arith-chat): the spec's "Start run" CodeLens starts a multi-turn run and its Resume
// lens continues it after a cancel; the guided flow, given an environment file, writes `env` (not
// `reward`) into an undoable spec and runs it. The env file is the arith-retry example's, in real
// Python; nothing depends on what the model answers.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { GrpoRunResult } from '../../../src/core/runs/runEvents';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { checkpointNames, loggedSteps } from './grpoFixtures';
import { useLocalEngineAndRunsFolder, waitFor } from '../helpers';

const RETRY = path.resolve(__dirname, '../../../../examples/arith-retry');

/** A folder with the arith-retry env, a few problems and an env spec; returns the spec's path. */
function writeEnvSpec(name: string, iterations: number): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-env-spec-'));
  fs.copyFileSync(path.join(RETRY, 'arith_retry.env.py'), path.join(dir, 'arith_retry.env.py'));
  fs.writeFileSync(path.join(dir, 'train.jsonl'), ['{"x": 3, "y": 4}', '{"x": 12, "y": 9}', '{"x": 5, "y": 5}', '{"x": 20, "y": 31}'].join('\n') + '\n');
  const spec = {
    name,
    backend: 'local',
    model: 'tinker-studio/arith-chat',
    renderer: 'chatml',
    lora_rank: 4,
    groups_per_batch: 2,
    group_size: 2,
    max_tokens: 6,
    iterations,
    save_every: 0,
    eval_every: 0,
    dataset: { path: 'train.jsonl' },
    env: { file: 'arith_retry.env.py', max_turns: 2, workers: 1 },
  };
  const file = path.join(dir, `${name}.grpo.json`);
  fs.writeFileSync(file, JSON.stringify(spec, null, 2) + '\n');
  return file;
}

const lensesOf = async (file: string) => {
  const doc = await vscode.workspace.openTextDocument(file);
  await vscode.window.showTextDocument(doc);
  return waitFor('the CodeLenses', async () => {
    const l = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri);
    return l && l.length > 0 ? l : undefined;
  });
};

suite('environment specs in the extension host', function () {
  this.timeout(300_000);
  const suiteState = useLocalEngineAndRunsFolder('tinker-env-specs-');
  let api: TinkerStudioTestHandles;

  suiteSetup(() => {
    api = suiteState.api();
  });

  test('an env spec\'s "Start run" CodeLens starts a multi-turn run; cancelled, its Resume lens finishes it without repeating an iteration', async () => {
    const specFile = writeEnvSpec('retry-lens', 4);
    const start = (await lensesOf(specFile)).find((l) => l.command?.command === 'tinker.startGrpoRun');
    assert.ok(start, 'a Start run lens on an env spec');
    assert.match(start.command!.title, /Start run/);

    // cancel once the first iteration is written (of four)
    let cancelled = false;
    const sub = api.registry.onDidChange(() => {
      const r = api.registry.active().find((x) => x.runName === 'retry-lens');
      if (!cancelled && r?.runDir && fs.existsSync(path.join(r.runDir, 'metrics.jsonl')) && loggedSteps(r.runDir).length >= 1) {
        cancelled = true;
        void vscode.commands.executeCommand('tinker.cancelRun', r.runDir);
      }
    });
    let first: GrpoRunResult | undefined;
    try {
      first = await vscode.commands.executeCommand<GrpoRunResult>(start.command!.command, ...(start.command!.arguments ?? []));
    } finally {
      sub.dispose();
    }
    assert.ok(first);
    assert.ok(cancelled, 'the cancel was sent');
    const samples = fs.readFileSync(path.join(first.runDir, 'iteration_000000', 'train_samples.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { transcript?: { turns: Array<{ new_messages: Array<{ content: string }> }> } });
    assert.strictEqual(samples.length, 4);
    assert.ok(samples.every((s) => s.transcript && /^What is \d+ \+ \d+\?$/.test(s.transcript.turns[0]!.new_messages[0]!.content)), 'episodes with their transcripts');
    assert.strictEqual(first.status, 'cancelled', first.error);
    const before = loggedSteps(first.runDir);

    const resume = await waitFor('the Resume lens', async () => (await lensesOf(specFile)).find((l) => l.command?.command === 'tinker.resumeRun'));
    const resumed = await vscode.commands.executeCommand<GrpoRunResult>('tinker.resumeRun', ...(resume.command!.arguments ?? []));
    assert.ok(resumed);
    assert.strictEqual(resumed.status, 'completed', resumed.error);
    assert.strictEqual(resumed.runDir, first.runDir);
    assert.deepStrictEqual(loggedSteps(first.runDir), [0, 1, 2, 3]);
    assert.ok(before.length >= 1 && before.length < 4, `cancelled after ${before.length} iterations`);
    assert.strictEqual(resumed.iterationsRun + before.length, 4, 'no iteration ran twice');
    assert.ok(checkpointNames(first.runDir).includes('final'));
  });

  test('the guided flow, given an environment file, writes env (not reward) into the spec and runs it', async () => {
    const dir = path.dirname(writeEnvSpec('unused', 1));
    const target = path.join(dir, 'guided-env.grpo.json');
    const result = await vscode.commands.executeCommand<GrpoRunResult>('tinker.startGrpoRun', {
      guided: {
        model: 'tinker-studio/arith-chat',
        renderer: 'chatml',
        dataset: path.join(dir, 'train.jsonl'),
        holdout: 'none',
        reward: path.join(dir, 'arith_retry.env.py'),
        groupSize: 2,
        groupsPerBatch: 2,
        iterations: 1,
        maxTokens: 6,
        specFile: target,
      },
    });
    const spec = JSON.parse(fs.readFileSync(target, 'utf8')) as Record<string, unknown>;
    assert.deepStrictEqual(spec.env, { file: 'arith_retry.env.py' });
    assert.strictEqual(spec.reward, undefined);
    assert.ok(result);
    assert.strictEqual(result.status, 'completed', result.error);
    assert.deepStrictEqual(loggedSteps(result.runDir), [0]);
    const cfg = JSON.parse(fs.readFileSync(path.join(result.runDir, 'config.json'), 'utf8')) as { env?: { file: string; max_turns: number } };
    assert.deepStrictEqual([cfg.env?.file, cfg.env?.max_turns], [path.join(dir, 'arith_retry.env.py'), 8]);
  });
});
