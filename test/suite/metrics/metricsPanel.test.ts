// The metrics panel's host side in a real extension host, with its real webview, driven through a
// recording transport: the snapshot it sends when the webview reports ready (a cookbook run with NaN
// and a partial last line), appends as metrics.jsonl grows, a fresh snapshot after being hidden and
// shown again, webview messages that do not parse, and requests with replies (a chart click opens
// an iteration).
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { Redactor } from '../../../src/core/config/redact';
import { Log } from '../../../src/vscode/common/log';
import { MetricsPanels, metricsPanels } from '../../../src/vscode/metrics/metricsPanels';
import type { ToWebview } from '../../../src/protocol/metricsProtocol';
import { activateExtension, EXTENSION_ID, waitFor } from '../helpers';
import { TransportRecorder } from '../common/recordingTransport';

type Snapshot = Extract<ToWebview, { type: 'snapshot' }>;
type Append = Extract<ToWebview, { type: 'append' }>;

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
  let api: TinkerStudioTestHandles;
  let log: Log;
  let recorder: TransportRecorder;
  let panels: MetricsPanels;
  let opened: Array<{ runDir: string; step: number }>;

  suiteSetup(async () => {
    api = await activateExtension();
    log = new Log(new Redactor(), 'Tinker (test)');
  });

  suiteTeardown(() => log.dispose());

  setup(() => {
    recorder = new TransportRecorder();
    opened = [];
    const extensionUri = vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri;
    panels = metricsPanels(
      {
        extensionUri,
        log,
        registry: api.registry,
        openIteration: async (runDir, step) => {
          opened.push({ runDir, step });
          return true;
        },
      },
      recorder.factory,
    );
  });

  teardown(async () => {
    panels.dispose();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  const open = async (dir: string) => {
    const panel = await panels.open(dir);
    return { panel, transport: recorder.of(panel.panel) };
  };

  test('sends the webview a snapshot of a cookbook run once it is ready: rows by step, NaN/Infinity as null, the partial last line left out', async () => {
    const dir = cookbookRun();
    const { panel, transport } = await open(dir);
    const snap = await waitFor('the snapshot (sent when the webview says ready)', () => transport.ofType<Snapshot>('snapshot').at(-1), 30_000);
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
    const { transport } = await open(dir);
    await waitFor('the snapshot', () => transport.ofType<Snapshot>('snapshot').at(-1), 30_000);
    const appended = new Promise<number[]>((resolve) => {
      const sub = transport.onDidSend((m) => {
        const append = transport.ofType<Append>('append')[0];
        if (append && m === append) {
          sub.dispose();
          resolve(append.rows.map((r) => r.step));
        }
      });
    });
    fs.appendFileSync(path.join(dir, 'metrics.jsonl'), 'ard/total": 0.625}\n{"step": 4, "env/all/reward/total": 0.75}\n');
    assert.deepStrictEqual(await appended, [3, 4]);
  });

  test('sends a fresh snapshot when the panel is shown again after being hidden (its webview is not retained)', async () => {
    const dir = cookbookRun();
    const { panel, transport } = await open(dir);
    const snapshots = () => transport.ofType<Snapshot>('snapshot');
    assert.strictEqual(panel.panel.options.retainContextWhenHidden, false);
    await waitFor('the first snapshot', () => snapshots().length >= 1, 30_000);
    const before = snapshots().length;
    const doc = await vscode.workspace.openTextDocument({ content: 'hide the panel', language: 'plaintext' });
    await vscode.window.showTextDocument(doc, { viewColumn: panel.panel.viewColumn, preview: false });
    await waitFor('the panel to be hidden', () => !panel.panel.visible);
    panel.reveal();
    await waitFor('a new snapshot after re-showing', () => snapshots().length > before, 30_000);
    assert.deepStrictEqual(
      snapshots().at(-1)?.rows.map((r) => r.step),
      [0, 1, 1, 2],
    );
  });

  test('the Open Metrics command opens the window’s panel of the run, once', async () => {
    const dir = cookbookRun();
    const result = await vscode.commands.executeCommand<string>('tinker.openMetrics', dir);
    assert.strictEqual(result, path.resolve(dir));
    const first = api.metrics.get(dir);
    assert.ok(first, 'a panel is open for the run');
    await vscode.commands.executeCommand('tinker.openMetrics', dir);
    assert.strictEqual(api.metrics.get(dir), first);
  });

  test('a message from the webview that does not parse is ignored, not thrown, and gets no reply', async () => {
    const dir = cookbookRun();
    const { transport } = await open(dir);
    await waitFor('the snapshot', () => transport.ofType<Snapshot>('snapshot').at(-1), 30_000);
    const sentBefore = transport.sent.length;
    for (const bad of [null, 42, { type: 'nope' }, { type: 'webviewError' }, { type: 'webviewError', message: 'x'.repeat(5000) }, { type: 'request', id: -1, method: 'openIteration' }]) {
      await transport.deliver(bad);
    }
    await transport.deliver({ type: 'webviewError', message: 'a real error report is logged' });
    assert.strictEqual(transport.sent.length, sentBefore, 'nothing was sent in answer');
  });

  test('a chart click requests its iteration: the request is answered with a reply carrying its id; bad requests get error replies', async () => {
    const dir = cookbookRun();
    const { transport } = await open(dir);
    await waitFor('the snapshot', () => transport.ofType<Snapshot>('snapshot').at(-1), 30_000);
    type ReplyMsg = { type: 'reply'; id: number; ok: boolean; value?: unknown; error?: string };
    const replyTo = (id: number) => transport.ofType<ReplyMsg>('reply').find((r) => r.id === id);
    await transport.deliver({ type: 'request', id: 7, method: 'openIteration', params: { step: 2 } });
    assert.deepStrictEqual(replyTo(7), { type: 'reply', id: 7, ok: true, value: { opened: true } });
    assert.deepStrictEqual(opened, [{ runDir: path.resolve(dir), step: 2 }]);
    await transport.deliver({ type: 'request', id: 8, method: 'openIteration', params: { step: -1 } });
    assert.strictEqual(replyTo(8)?.ok, false);
    assert.match(replyTo(8)?.error ?? '', /openIteration: step/);
    await transport.deliver({ type: 'request', id: 9, method: 'deleteRun', params: {} });
    assert.deepStrictEqual(replyTo(9), { type: 'reply', id: 9, ok: false, error: 'unknown request "deleteRun"' });
    assert.strictEqual(opened.length, 1, 'refused requests did nothing');
  });
});
