// The start flow's cost estimate in the extension host, on the embedded local engine with a price table
// set in the test (tinker.prices): at or below tinker.confirmCostAboveUsd the run starts without a
// question; above it the window asks (the seam answers), and the run starts only when confirmed.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { SftRunResult } from '../../../src/core/runs/runEvents';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { useLocalEngineAndRunsFolder } from '../helpers';

/** 8 chats of 12 bytes; one step of 4 trains 48 tokens: $48 at $1 a token. */
function writeSpec(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-cost-confirm-'));
  const chats = Array.from({ length: 8 }, (_, i) => JSON.stringify({ prompt: `${i} + 10 = `, completion: `=${i + 10}` }));
  fs.writeFileSync(path.join(dir, 'chats.jsonl'), chats.join('\n') + '\n');
  const file = path.join(dir, `${name}.sft.json`);
  fs.writeFileSync(file, JSON.stringify({ name, backend: 'local', model: 'tinker-studio/arith-gpt', renderer: 'chatml', lora_rank: 4, learning_rate: 0.004, batch_size: 4, max_steps: 1, eval_every: 0, save_every: 0, dataset: { path: 'chats.jsonl' } }));
  return file;
}

suite('the estimated cost before a run starts, and its confirmation', function () {
  this.timeout(240_000);
  const state = useLocalEngineAndRunsFolder('tinker-cost-confirm-runs-');
  let api: TinkerStudioTestHandles;
  const seams: Array<{ dispose(): void }> = [];
  const c = () => vscode.workspace.getConfiguration('tinker');

  suiteSetup(async () => {
    api = state.api();
    await c().update('prices', { models: { 'tinker-studio/arith-gpt': { prefill: 1e6, sample: 1e6, train: 1e6 } } }, vscode.ConfigurationTarget.Global);
  });
  teardown(() => {
    for (const s of seams.splice(0)) s.dispose();
  });
  suiteTeardown(async () => {
    await c().update('prices', undefined, vscode.ConfigurationTarget.Global);
    await c().update('confirmCostAboveUsd', undefined, vscode.ConfigurationTarget.Global);
  });

  const asking = (answer: string | undefined) => {
    const asked: string[] = [];
    seams.push(api.ui.override({ showWarningMessage: async (m) => (asked.push(m), answer) }));
    return asked;
  };

  test('at or below the threshold: no question, the run starts', async () => {
    await c().update('confirmCostAboveUsd', 48, vscode.ConfigurationTarget.Global);
    const asked = asking(undefined);
    const result = await vscode.commands.executeCommand<SftRunResult>('tinker.startSftRun', vscode.Uri.file(writeSpec('below')));
    assert.deepStrictEqual(asked, []);
    assert.strictEqual(result?.status, 'completed', result?.error);
  });

  test('above it: the window asks with the estimate; dismissed, nothing starts', async () => {
    await c().update('confirmCostAboveUsd', 47, vscode.ConfigurationTarget.Global);
    const asked = asking(undefined);
    const before = fs.readdirSync(state.runsDir()).length;
    const result = await vscode.commands.executeCommand<SftRunResult | undefined>('tinker.startSftRun', vscode.Uri.file(writeSpec('dismissed')));
    assert.strictEqual(result, undefined);
    assert.strictEqual(asked.length, 1);
    assert.match(asked[0]!, /^Estimated cost of SFT run dismissed \(1 steps × 4 chats\): \$48\.00 \(estimate\) for 48 tokens, above tinker\.confirmCostAboveUsd \(\$47\)/);
    assert.strictEqual(fs.readdirSync(state.runsDir()).length, before, 'no run directory');
  });

  test('above it and confirmed: the run starts', async () => {
    const asked = asking('Start');
    const result = await vscode.commands.executeCommand<SftRunResult>('tinker.startSftRun', vscode.Uri.file(writeSpec('confirmed')));
    assert.strictEqual(asked.length, 1);
    assert.strictEqual(result?.status, 'completed', result?.error);
  });
});
