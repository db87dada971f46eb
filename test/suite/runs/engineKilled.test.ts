// A fault of the whole product: the local engine process the extension started is killed (SIGKILL)
// in the middle of a GRPO run. The run must stop at once with a message saying so, be shown as
// resumable, and Resume (which starts a new engine on the same data dir) must finish it with every
// iteration logged once — proved from metrics.jsonl and from the engine's own applied-steps record.
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { GrpoRunResult } from '../../../src/core/runs/runEvents';
import { writeTinySpec } from './grpoFixtures';
import { useLocalEngineAndRunsFolder, waitFor } from '../helpers';

const RUN_TIMEOUT = 300_000;
const ITERATIONS = 6;

/** The engine processes this extension host started: pid and data dir, from their command lines. */
function engineChildren(): Array<{ pid: number; dataDir: string }> {
  const out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(.*dist[\\/]engine\.js.*)$/.exec(l))
    .flatMap((m) => {
      const dataDir = m ? /--data-dir\s+(\S+)/.exec(m[2]!)?.[1] : undefined;
      return m && dataDir ? [{ pid: Number(m[1]), dataDir }] : [];
    });
}

interface AppliedStep {
  model_id: string;
  seq_id: number;
  type: string;
}

function appliedSteps(dataDir: string): AppliedStep[] {
  return fs
    .readFileSync(path.join(dataDir, 'applied-steps.jsonl'), 'utf8')
    .split('\n')
    .flatMap((l) => {
      try {
        return l.trim() ? [JSON.parse(l) as AppliedStep] : [];
      } catch {
        return []; // a line cut off by the kill
      }
    });
}

function rawMetricSteps(runDir: string): number[] {
  return fs
    .readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => (JSON.parse(l) as { step: number }).step);
}

function checkpoints(runDir: string): Array<{ name: string; batch: number; state_path?: string }> {
  return fs
    .readFileSync(path.join(runDir, 'checkpoints.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { name: string; batch: number; state_path?: string });
}

const modelOf = (tinkerPath: string | undefined) => String(tinkerPath).slice('tinker://'.length).split('/')[0]!;

suite('The local engine killed in the middle of a run', function () {
  this.timeout(RUN_TIMEOUT * 2);
  const suiteState = useLocalEngineAndRunsFolder('tinker-engine-killed-');

  test('the run stops with a clear message, and Resume continues from the last checkpoint losing and repeating nothing', async () => {
    const api = suiteState.api();
    const spec = writeTinySpec({ name: 'engine-killed', iterations: ITERATIONS, holdout: false });
    // killed as soon as iteration 1 is under way (iteration 0 is logged and checkpointed by then)
    let victim: { pid: number; dataDir: string } | undefined;
    let killError: unknown;
    const sub = api.registry.onDidChange((r) => {
      if (victim || killError || r.specFile !== spec || r.step === undefined || r.step < 1 || r.status !== 'running') return;
      try {
        const engines = engineChildren();
        assert.strictEqual(engines.length, 1, `one engine process under the extension host (found ${JSON.stringify(engines)})`);
        victim = engines[0]!;
        process.kill(victim.pid, 'SIGKILL');
      } catch (err) {
        killError = err;
      }
    });
    let result: GrpoRunResult | undefined;
    try {
      result = await vscode.commands.executeCommand<GrpoRunResult>('tinker.startGrpoRun', spec);
    } finally {
      sub.dispose();
    }
    if (killError) throw killError;
    assert.ok(victim, 'the engine was killed during the run');
    const { pid, dataDir } = victim;
    assert.ok(result, 'the command resolves with a result');
    assert.strictEqual(result.status, 'failed');
    assert.match(result.error ?? '', /local engine stopped unexpectedly \(its process \d+ was killed\); Resume continues from the last checkpoint/);
    const runDir = result.runDir;
    const before = rawMetricSteps(runDir);
    assert.ok(before.length >= 1 && before.length < ITERATIONS, `stopped part-way (steps ${before.join(',')})`);
    assert.deepStrictEqual(before, before.map((_, i) => i), 'the steps written before the kill are whole and in order');
    const resumePoint = checkpoints(runDir).at(-1)!;
    assert.strictEqual(resumePoint.batch, before.length, 'the last checkpoint is right after the last logged step');
    assert.strictEqual(api.registry.active().length, 0, 'nothing is left running');

    const row = await waitFor('the run in the Runs view as resumable', async () =>
      (await api.runsTree.localRuns()).find((r) => r.run.dir === runDir && api.runsTree.getTreeItem(r).contextValue === 'tinker.run:resumable'),
    );
    assert.strictEqual(row.status, 'failed');

    const resumed = await vscode.commands.executeCommand<GrpoRunResult>('tinker.resumeRun', runDir);
    assert.ok(resumed);
    assert.strictEqual(resumed.status, 'completed', resumed.error);
    assert.strictEqual(resumed.runDir, runDir);
    assert.strictEqual(resumed.iterationsRun, ITERATIONS - before.length, 'the resumed run ran only the missing iterations');
    assert.deepStrictEqual(rawMetricSteps(runDir), [0, 1, 2, 3, 4, 5], 'metrics.jsonl: every iteration exactly once');

    // the engine's own record (the new engine appends to the same data dir)
    const after = engineChildren();
    assert.ok(after.length === 1 && after[0]!.pid !== pid && after[0]!.dataDir === dataDir, 'Resume started a new engine on the same data dir');
    const steps = appliedSteps(dataDir);
    const killedModel = modelOf(resumePoint.state_path);
    const final = checkpoints(runDir).at(-1)!;
    assert.strictEqual(final.name, 'final');
    const resumedModel = modelOf(final.state_path);
    assert.notStrictEqual(resumedModel, killedModel);
    const killed = steps.filter((s) => s.model_id === killedModel).map((s) => s.type);
    const upTo = nthIndex(killed, 'save_weights', before.length);
    assert.ok(upTo >= 0, `the killed engine recorded the save of the resume point (${killed.join(',')})`);
    assert.strictEqual(killed.slice(0, upTo).filter((t) => t === 'optim_step').length, before.length, 'the resume point holds exactly the logged updates');
    const resumedTypes = steps.filter((s) => s.model_id === resumedModel).map((s) => s.type);
    assert.strictEqual(resumedTypes[0], 'load_weights', 'the resumed model starts from the saved state');
    assert.strictEqual(resumedTypes.filter((t) => t === 'optim_step').length, ITERATIONS - before.length, 'one update for each missing iteration, none repeated');
  });
});

/** The index of the n-th (1-based) occurrence of `value`, or -1. */
function nthIndex(values: string[], value: string, n: number): number {
  let seen = 0;
  for (let i = 0; i < values.length; i++) if (values[i] === value && ++seen === n) return i;
  return -1;
}
