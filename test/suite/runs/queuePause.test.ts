// The queue in sight, in a real VS Code host: the local engine is started with its service
// simulation (a rate-limited queue holds one optim_step for a few polls), and while the run waits the
// run's status bar item says "paused: rate limit — for N s so far"; once the queue is active again
// the words go. The engine is restarted without the simulation afterwards.
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as vscode from 'vscode';
import type { GrpoRunResult } from '../../../src/core/runs/runEvents';
import { SIMULATION_ENV } from '../../../src/engine/server/simulation';
import { writeTinySpec } from './grpoFixtures';
import { useLocalEngineAndRunsFolder } from '../helpers';
import type { TinkerStudioTestHandles } from '../../../src/extension';

/**
 * Stops the engine process this extension host started and waits until the extension has seen it go,
 * so the next run starts one with the current environment.
 */
async function stopEngine(api: TinkerStudioTestHandles): Promise<void> {
  const out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  const pids = out.split('\n').flatMap((line) => {
    const m = /^\s*(\d+)\s+.*dist[\\/]engine\.js/.exec(line);
    return m ? [Number(m[1])] : [];
  });
  if (pids.length === 0) return;
  const gone = new Promise<void>((resolve) => {
    const sub = api.connection.onLocalEngineExit(() => {
      sub.dispose();
      resolve();
    });
  });
  for (const pid of pids) process.kill(pid, 'SIGKILL');
  await gone;
}

suite('A run on a paused queue (engine service simulation)', function () {
  this.timeout(300_000);
  const suiteState = useLocalEngineAndRunsFolder('tinker-queue-pause-');

  suiteTeardown(async () => {
    delete process.env[SIMULATION_ENV];
    await stopEngine(suiteState.api());
  });

  test('the status bar says "paused: rate limit — for N s so far" while the queue holds the run, and not after', async () => {
    const api = suiteState.api();
    process.env[SIMULATION_ENV] = JSON.stringify({
      pauses: [{ request: 'OptimStep', at: [2], queue_state: 'paused_rate_limit', reason: 'concurrent training clients rate limit hit', polls: 4, hold_ms: 500 }],
    });
    await stopEngine(api);
    const spec = writeTinySpec({ name: 'queue-pause', iterations: 3, holdout: false });
    // every text the item shows, as the registry changes (the item redraws before this listener runs)
    const shown: string[] = [];
    const sub = api.registry.onDidChange(() => {
      const t = api.runStatus.text;
      if (t !== undefined) shown.push(t);
    });
    let result: GrpoRunResult | undefined;
    try {
      result = await vscode.commands.executeCommand<GrpoRunResult>('tinker.startGrpoRun', spec);
    } finally {
      sub.dispose();
    }
    assert.ok(result);
    assert.strictEqual(result.status, 'completed', result.error);
    const paused = shown.filter((t) => /paused: rate limit — for \d+ s so far/.test(t));
    assert.ok(paused.length > 0, `the pause was shown (texts: ${JSON.stringify(shown)})`);
    const last = shown.lastIndexOf(paused[paused.length - 1]!);
    assert.ok(
      shown.slice(last + 1).some((t) => !/paused:/.test(t)),
      `the words went once the queue was active again (after: ${JSON.stringify(shown.slice(last + 1))})`,
    );
    assert.strictEqual(api.runStatus.text, undefined, 'the item is hidden when nothing runs');
  });
});
