// The context keys behind the manifest's `when` clauses flip with the state they describe:
// tinker.runActive while a run runs, tinker.hasResumableRun when the runs folder holds an unfinished
// run, tinker.rewardFileActive while a reward file is the active editor.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { GrpoRunResult } from '../../../src/core/runs/runEvents';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { CONTEXT_KEYS } from '../../../src/vscode/common/contextKeys';
import { writeTinySpec } from '../runs/grpoFixtures';
import { useLocalEngineAndRunsFolder, waitFor, workspaceRoot } from '../helpers';

suite('context keys', function () {
  this.timeout(240_000);
  const suiteState = useLocalEngineAndRunsFolder('tinker-ctx-runs-');
  let api: TinkerStudioTestHandles;
  const key = (k: string) => api.contextKeys.get(k);

  suiteSetup(() => {
    api = suiteState.api();
  });

  suiteTeardown(async () => {
    const c = vscode.workspace.getConfiguration('tinker');
    await c.update('rewardFiles', undefined, vscode.ConfigurationTarget.Global);
  });

  test('runActive while a run runs; hasResumableRun once it is cancelled, cleared when it completes', async () => {
    await waitFor('no run and nothing to resume in an empty runs folder', () => key(CONTEXT_KEYS.runActive) === false && key(CONTEXT_KEYS.hasResumableRun) === false);
    const spec = writeTinySpec({ name: 'ctx', iterations: 50, holdout: false });
    const started = vscode.commands.executeCommand<GrpoRunResult>('tinker.startGrpoRun', vscode.Uri.file(spec));
    await waitFor('tinker.runActive to turn on', () => key(CONTEXT_KEYS.runActive) === true, 60_000);
    const run = await waitFor('the run directory', () => api.registry.active().find((r) => r.runDir && fs.existsSync(path.join(r.runDir, 'metrics.jsonl'))), 120_000);
    assert.strictEqual(key(CONTEXT_KEYS.hasResumableRun), false, 'a running run is not offered for resume');
    assert.ok(await vscode.commands.executeCommand<boolean>('tinker.cancelRun', run.runDir));
    const cancelled = await started;
    assert.strictEqual(cancelled?.status, 'cancelled');
    await waitFor('tinker.runActive to turn off', () => key(CONTEXT_KEYS.runActive) === false);
    await waitFor('tinker.hasResumableRun to turn on', () => key(CONTEXT_KEYS.hasResumableRun) === true);
    // finish it: nothing is left to resume
    const done = await vscode.commands.executeCommand<GrpoRunResult>('tinker.resumeRun', cancelled!.runDir, spec);
    assert.ok(done);
    if (done.status !== 'completed') assert.fail(`resume ended ${done.status}: ${done.error}`);
    await waitFor('tinker.hasResumableRun to turn off', () => key(CONTEXT_KEYS.hasResumableRun) === false, 30_000);
  });

  test('rewardFileActive follows the active editor', async () => {
    const dir = path.join(workspaceRoot(), 'ctx-rewards');
    fs.mkdirSync(dir, { recursive: true });
    const reward = path.join(dir, 'score.py');
    fs.writeFileSync(reward, 'def compute_reward(completion: str, ground_truth: str) -> float:\n    return 1.0\n');
    const other = path.join(dir, 'notes.txt');
    fs.writeFileSync(other, 'not a reward file\n');
    await vscode.workspace.getConfiguration('tinker').update('rewardFiles', ['ctx-rewards/*.py'], vscode.ConfigurationTarget.Global);
    await vscode.window.showTextDocument(vscode.Uri.file(reward));
    await waitFor('tinker.rewardFileActive on a reward file', () => key(CONTEXT_KEYS.rewardFileActive) === true, 30_000);
    await vscode.window.showTextDocument(vscode.Uri.file(other));
    await waitFor('tinker.rewardFileActive off on another file', () => key(CONTEXT_KEYS.rewardFileActive) === false);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
});
