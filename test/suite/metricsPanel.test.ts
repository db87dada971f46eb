// The metrics panel's host side in a real extension host, with its real webview: the snapshot it
// sends when the webview reports ready (a cookbook run with NaN and a partial last line), appends
// as metrics.jsonl grows, a fresh snapshot after being hidden and shown again, and webview
// messages that do not parse.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { TinkerStudioApi } from '../../src/extension';
import { activateExtension, waitFor } from './helpers';

/** A run directory as the Python tinker-cookbook writes it, caught while a line is being written. */
function cookbookRun(): string {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-cookbook-run-')), 'math-rl');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_name: 'Qwen/Qwen3-8B', learning_rate: 4e-5 }));
  fs.writeFileSync(
    path.join(dir, 'metrics.jsonl'),
    [
      '{"step": 0, "env/all/reward/total": 0.25, "env/all/by_group/frac_mixed": 0.5, "optim/kl_sample_train_v1": NaN, "time/total": 12.5}',
      '{"step": 1, "env/all/reward/total": 0.375, "env/all/by_group/frac_mixed": 0.625, "optim/kl_sample_train_v1": 0.001}',
      '{"step": 1, "test/env/all/reward/total": 0.3}',
      '{"step": 2, "env/all/reward/total": 0.5, "optim/entropy": Infinity}',
      '{"step": 3, "env/all/rew',
    ].join('\n'),
  );
  return dir;
}

suite('Metrics panel', function () {
  this.timeout(60_000);
  let api: TinkerStudioApi;

  suiteSetup(async () => {
    api = await activateExtension();
  });

  teardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('sends the webview a snapshot of a cookbook run once it is ready: rows by step, NaN/Infinity as null, the partial last line left out', async () => {
    const dir = cookbookRun();
    const opened = await vscode.commands.executeCommand<string>('tinker.openMetrics', dir);
    assert.strictEqual(opened, path.resolve(dir));
    const panel = api.metrics.get(dir);
    assert.ok(panel, 'a panel is open for the run');
    const snap = await waitFor('the snapshot (sent when the webview says ready)', () => panel.lastSnapshot, 30_000);
    assert.strictEqual(snap.run.name, 'math-rl');
    assert.strictEqual(snap.run.model, 'Qwen/Qwen3-8B');
    assert.strictEqual(snap.run.status, 'not finished');
    assert.deepStrictEqual(snap.problems, []);
    assert.deepStrictEqual(
      snap.rows.map((r) => r.step),
      [0, 1, 1, 2],
      'every complete line, in file order (the webview merges rows of the same step)',
    );
    assert.strictEqual(snap.rows[0]!.values['optim/kl_sample_train_v1'], null);
    assert.strictEqual(snap.rows[0]!.values['env/all/reward/total'], 0.25);
    assert.strictEqual(snap.rows[2]!.values['test/env/all/reward/total'], 0.3);
    assert.strictEqual(snap.rows[3]!.values['optim/entropy'], null);
    assert.strictEqual(panel.panel.webview.options.enableScripts, true);
    assert.ok(/default-src 'none'/.test(panel.panel.webview.html), 'CSP default-src none');
    assert.ok(/script-src 'nonce-[^']+'/.test(panel.panel.webview.html), 'scripts by nonce');
    assert.ok(!/<script>/.test(panel.panel.webview.html), 'no inline script without a nonce');
  });

  test('appends rows as metrics.jsonl grows, including the line that was partial', async () => {
    const dir = cookbookRun();
    await vscode.commands.executeCommand('tinker.openMetrics', dir);
    const panel = api.metrics.get(dir);
    assert.ok(panel);
    await waitFor('the snapshot', () => panel.lastSnapshot, 30_000);
    const appended = new Promise<number[]>((resolve) => {
      const sub = panel.onDidPost((m) => {
        if (m.type === 'append') {
          sub.dispose();
          resolve(m.rows.map((r) => r.step));
        }
      });
    });
    fs.appendFileSync(path.join(dir, 'metrics.jsonl'), 'ard/total": 0.625}\n{"step": 4, "env/all/reward/total": 0.75}\n');
    assert.deepStrictEqual(await appended, [3, 4]);
  });

  test('sends a fresh snapshot when the panel is shown again after being hidden (its webview is not retained)', async () => {
    const dir = cookbookRun();
    await vscode.commands.executeCommand('tinker.openMetrics', dir);
    const panel = api.metrics.get(dir);
    assert.ok(panel);
    assert.strictEqual(panel.panel.options.retainContextWhenHidden, false);
    await waitFor('the first snapshot', () => panel.snapshotsSent >= 1, 30_000);
    const before = panel.snapshotsSent;
    const doc = await vscode.workspace.openTextDocument({ content: 'hide the panel', language: 'plaintext' });
    await vscode.window.showTextDocument(doc, { viewColumn: panel.panel.viewColumn, preview: false });
    await waitFor('the panel to be hidden', () => !panel.panel.visible);
    panel.reveal();
    await waitFor('a new snapshot after re-showing', () => panel.snapshotsSent > before, 30_000);
    assert.deepStrictEqual(
      panel.lastSnapshot?.rows.map((r) => r.step),
      [0, 1, 1, 2],
    );
  });

  test('opening the metrics of the same run twice reuses its panel', async () => {
    const dir = cookbookRun();
    await vscode.commands.executeCommand('tinker.openMetrics', dir);
    const first = api.metrics.get(dir);
    await vscode.commands.executeCommand('tinker.openMetrics', dir);
    assert.strictEqual(api.metrics.get(dir), first);
  });

  test('a message from the webview that does not parse is ignored, not thrown', async () => {
    const dir = cookbookRun();
    await vscode.commands.executeCommand('tinker.openMetrics', dir);
    const panel = api.metrics.get(dir);
    assert.ok(panel);
    for (const bad of [null, 42, { type: 'nope' }, { type: 'webviewError' }, { type: 'webviewError', message: 'x'.repeat(5000) }]) {
      await panel.handleMessage(bad);
    }
    await panel.handleMessage({ type: 'webviewError', message: 'a real error report is logged' });
  });
});
