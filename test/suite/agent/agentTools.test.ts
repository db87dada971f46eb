// The agent tools in VS Code's language-model tool registry: listed in vscode.lm.tools, and
// vscode.lm.invokeTool runs init_grpo and one train_grpo_step in the extension host, whose run then
// appears in the Runs view like any other, as "paused (agent)" between calls; Cancel Run ends it.
// start_sweep runs its sweep in the window's sweep runner: the sweep node, Cancel Sweep, sweep_status.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { writeTinySpec } from '../runs/grpoFixtures';
import { useLocalEngineAndRunsFolder, waitFor } from '../helpers';

const TOOL_NAMES = ['init_grpo', 'train_grpo_step', 'init_sft', 'train_sft_step', 'init_dpo', 'train_dpo_step', 'sample', 'save', 'load', 'status', 'finish'];

function resultText(r: vscode.LanguageModelToolResult): string {
  return r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('\n');
}

suite('agent tools (language-model tools)', function () {
  this.timeout(240_000);
  const suiteState = useLocalEngineAndRunsFolder('tinker-agent-runs-');
  let api: TinkerStudioTestHandles;
  let runsDir: string;

  suiteSetup(() => {
    api = suiteState.api();
    runsDir = suiteState.runsDir();
  });

  test('the tools are registered', async () => {
    const names = await waitFor('the Tinker tools in vscode.lm.tools', () => {
      const found = vscode.lm.tools.map((t) => t.name).filter((n) => TOOL_NAMES.includes(n));
      return found.length === TOOL_NAMES.length ? found : undefined;
    });
    assert.deepStrictEqual([...names].sort(), [...TOOL_NAMES].sort());
    const train = vscode.lm.tools.find((t) => t.name === 'train_grpo_step')!;
    assert.match(train.description, /ALL-0/);
  });

  test('init_grpo + train_grpo_step through vscode.lm.invokeTool train a run the Runs view shows', async () => {
    const specFile = writeTinySpec({ name: 'agent-tiny', iterations: 3, holdout: false });
    const token = new vscode.CancellationTokenSource().token;
    const init = await vscode.lm.invokeTool('init_grpo', { input: { spec_file: specFile }, toolInvocationToken: undefined }, token);
    assert.match(resultText(init), /^session ready: agent-tiny/);
    const step = await vscode.lm.invokeTool('train_grpo_step', { input: { num_iterations: 1 }, toolInvocationToken: undefined }, token);
    const text = resultText(step);
    assert.match(text, /^iteration 0 done \(1\/3\)/, text);
    const runDir = /run directory: (.+)$/m.exec(text)?.[1];
    assert.ok(runDir && path.dirname(runDir) === runsDir, `the run is in the runs folder (${text})`);
    // the view re-reads a run when its files change: wait for the row that has the step logged
    const row = await waitFor('the agent run in the Runs view, at iteration 0', async () => (await api.runsTree.localRuns()).find((r) => r.run.dir === runDir && r.run.lastStep === 0));
    assert.strictEqual(row.status, 'paused (agent)', 'a live agent session waiting between calls');
    const status = await vscode.lm.invokeTool('status', { input: {}, toolInvocationToken: undefined }, token);
    assert.match(resultText(status), /agent-tiny \(tinker-studio\/arith-gpt\), iteration 1\/3: idle/);
    assert.match(resultText(status), /holds tinker session, training client, sampler, reward workers/);

    // Cancel Run ends the session waiting between calls cleanly: the run is no longer paused, the session is gone
    assert.ok(await vscode.commands.executeCommand<boolean>('tinker.cancelRun', runDir), 'the command found the paused agent run');
    const ended = await waitFor('the agent run to end', async () => (await api.runsTree.localRuns()).find((r) => r.run.dir === runDir && r.status !== 'paused (agent)'));
    assert.strictEqual(ended.status, 'cancelled');
    const gone = await vscode.lm.invokeTool('status', { input: {}, toolInvocationToken: undefined }, token);
    assert.match(resultText(gone), /^no session: call init_grpo, init_sft or init_dpo first/);
  });

  test('a wrong value, type or missing argument, and an unknown eval, are answered in the project\'s words', async () => {
    const token = new vscode.CancellationTokenSource().token;
    const invoke = async (name: string, input: object) => resultText(await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined }, token));
    assert.strictEqual(await invoke('evaluate', { targets: ['tinker-studio/arith-gpt'], dataset: 'holdout.jsonl', grader: 'reward.py', max_problems: -3 }), 'error: evaluate: max_problems: must be at least 1 (got -3)');
    assert.strictEqual(await invoke('train_grpo_step', { num_iterations: 'two' }), 'error: train_grpo_step: num_iterations: must be a number, not "two"');
    assert.strictEqual(await invoke('eval_status', {}), 'error: eval_status: results: is required');
    assert.match(await invoke('eval_status', { results: 'no-such-eval' }), /^error: eval_status: no eval "no-such-eval": no results folder at /);
  });

  test("start_sweep runs in the window's sweep runner: its node in the Runs view, Cancel Sweep stops it, sweep_status follows", async () => {
    const spec = writeTinySpec({ name: 'agent-sweep-base', iterations: 40, holdout: false });
    const file = path.join(path.dirname(spec), 'agent-lr.sweep.json');
    const sweep = { base: path.basename(spec), method: 'grid', parameters: { learning_rate: { values: [0.001, 0.004] } }, metric: { name: 'env/all/reward/total', goal: 'maximize' } };
    fs.writeFileSync(file, JSON.stringify(sweep, null, 2) + '\n');
    const token = new vscode.CancellationTokenSource().token;
    const invoke = async (name: string, input: object) => resultText(await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined }, token));
    const started = await invoke('start_sweep', { sweep_file: file });
    const dir = /^sweep started in the background: (.+)$/m.exec(started)?.[1];
    assert.ok(dir && path.dirname(dir) === runsDir, started);
    // the window runs it, as if started from the palette: the sweep runner has it, its first run is in the registry
    const active = await waitFor("the sweep in the window's sweep runner", () => api.sweeps.byDir(dir));
    assert.strictEqual(active.file, file);
    const run = await waitFor('its first run in the run registry', () => api.registry.all().find((r) => r.runName === 'learning_rate_0.001' && r.status === 'running'));
    const n = await waitFor('the sweep node in the Runs view, running', async () => (await api.runsTree.sweepNodes()).find((x) => x.dir === dir && x.running));
    assert.strictEqual(api.runsTree.getTreeItem(n).contextValue, 'tinker.sweep:running', 'its menu offers Cancel Sweep');
    assert.match(await invoke('start_sweep', { sweep_file: file }), /^already running: /);
    assert.match(await invoke('sweep_status', { sweep: dir }), /^running: 0\/2 done/);
    // Cancel Sweep on its node stops it: each run keeps its resume point
    await vscode.commands.executeCommand('tinker.cancelSweep', { sweepDir: dir });
    await waitFor('the sweep to stop', () => (api.sweeps.byDir(dir) ? undefined : true));
    await waitFor('its run to end', () => (run.status === 'running' || run.status === 'starting' ? undefined : run.status));
    assert.strictEqual(run.status, 'cancelled');
    assert.match(await invoke('sweep_status', { sweep: dir }), /^not running: 0\/2 runs finished \(start_sweep resumes it\)/);
  });
});
