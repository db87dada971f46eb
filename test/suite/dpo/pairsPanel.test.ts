// The Preference Pairs panel's host side in a real extension host with its real webview, driven
// through a recording transport: the snapshot of a DPO run (its pairs file through config.json, each
// pair's margin at the start and now from iteration_*/pairs.jsonl), margins sent as the run writes a
// new step, a pair's chosen ↔ rejected in the native diff editor, and a pairs file with a bad line.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { Redactor } from '../../../src/core/config/redact';
import { Log } from '../../../src/vscode/common/log';
import { PairsPanels, pairsPanels } from '../../../src/vscode/dpo/pairsPanels';
import type { ToWebview } from '../../../src/protocol/pairsProtocol';
import { activateExtension, EXTENSION_ID, waitFor } from '../helpers';
import { TransportRecorder } from '../common/recordingTransport';

type Snapshot = Extract<ToWebview, { type: 'snapshot' }>;
type Margins = Extract<ToWebview, { type: 'margins' }>;

function dpoRun(): { dir: string; pairsFile: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-pairs-panel-'));
  const pairsFile = path.join(root, 'pairs.jsonl');
  fs.writeFileSync(pairsFile, ['{"prompt": "What is 81 + 65?", "chosen": "146", "rejected": "144"}', '{"prompt": "What is 2 + 2?", "chosen": "4", "rejected": "5"}', '{"prompt": "tie", "chosen": "a"}'].join('\n') + '\n');
  const dir = path.join(root, 'runs', 'arith-20261127-000000');
  fs.mkdirSync(path.join(dir, 'iteration_000000'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ run_kind: 'dpo', dpo_beta: 0.1, spec_file: path.join(root, 'arith.dpo.json'), dataset: { path: 'pairs.jsonl' } }));
  fs.writeFileSync(path.join(dir, 'iteration_000000', 'pairs.jsonl'), '{"pair":"pairs.jsonl:1","split":"train","margin":0}\n{"pair":"pairs.jsonl:2","split":"validation","margin":0}\n');
  return { dir, pairsFile };
}

suite('Preference Pairs panel', function () {
  this.timeout(90_000);
  let api: TinkerStudioTestHandles;
  let log: Log;
  let recorder: TransportRecorder;
  let panels: PairsPanels;

  suiteSetup(async () => {
    api = await activateExtension();
    log = new Log(new Redactor(), 'Tinker (test)');
  });

  suiteTeardown(() => log.dispose());

  setup(() => {
    recorder = new TransportRecorder();
    const extensionUri = vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri;
    panels = pairsPanels({ extensionUri, log, onRunEvent: () => new vscode.Disposable(() => undefined), isRunning: () => false }, recorder.factory);
  });

  teardown(async () => {
    panels.dispose();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('a DPO run: the pairs with their margins at the start and now, live as the run writes a step; chosen ↔ rejected in the diff editor', async () => {
    const { dir } = dpoRun();
    const panel = await panels.open(dir);
    const transport = recorder.of(panel.panel);
    const snap = await waitFor('the snapshot (sent when the webview says ready)', () => transport.ofType<Snapshot>('snapshot').at(-1), 45_000);
    assert.strictEqual(snap.source.kind, 'run');
    assert.strictEqual(snap.beta, 0.1);
    assert.deepStrictEqual(snap.pairs.map((p) => [p.id, p.prompt, p.chosen, p.rejected, p.start, p.now]), [
      ['pairs.jsonl:1', 'What is 81 + 65?', '146', '144', 0, 0],
      ['pairs.jsonl:2', 'What is 2 + 2?', '4', '5', 0, 0],
    ]);
    assert.strictEqual(snap.skipped.length, 1, 'the bad line is counted, the good ones kept');
    assert.ok(/default-src 'none'/.test(panel.panel.webview.html) && /script-src 'nonce-[^']+'/.test(panel.panel.webview.html), 'strict CSP with a nonce');

    fs.mkdirSync(path.join(dir, 'iteration_000001'));
    fs.writeFileSync(path.join(dir, 'iteration_000001', 'pairs.jsonl'), '{"pair":"pairs.jsonl:1","split":"train","margin":-0.05}\n');
    const m = await waitFor('the new step\'s margins', () => transport.ofType<Margins>('margins').find((x) => x.updates.some((u) => u.id === 'pairs.jsonl:1' && u.now === -0.05)), 30_000);
    assert.ok(m);
    assert.deepStrictEqual(panel.pairs.map((p) => [p.start, p.now, p.step]), [[0, -0.05, 1], [0, 0, 0]]);

    const { left, right } = await panel.diff('pairs.jsonl:1');
    const [l, r] = await Promise.all([vscode.workspace.openTextDocument(left), vscode.workspace.openTextDocument(right)]);
    assert.match(l.getText(), /What is 81 \+ 65\?[\s\S]*--- chosen ---\n146/);
    assert.match(r.getText(), /--- rejected ---\n144/);
    const tab = await waitFor('the diff editor', () => {
      const t = vscode.window.tabGroups.activeTabGroup.activeTab;
      return t?.input instanceof vscode.TabInputTextDiff ? t : undefined;
    });
    assert.strictEqual((tab.input as vscode.TabInputTextDiff).original.toString(), left.toString());
    void api;
  });

  test('Show Preference Pairs opens the panel on a pairs file (a failing command is shown, never thrown: a missing file opens nothing)', async () => {
    const { pairsFile } = dpoRun();
    assert.strictEqual(await vscode.commands.executeCommand('tinker.showPreferencePairs', vscode.Uri.file(pairsFile)), true);
    const opened = await waitFor('the pairs panel in the window', () => api.pairs.get(pairsFile));
    assert.ok(opened);
    const missing = path.join(os.tmpdir(), 'no-such-pairs.jsonl');
    assert.strictEqual(await vscode.commands.executeCommand('tinker.showPreferencePairs', missing), undefined);
    assert.strictEqual(api.pairs.get(missing), undefined);
  });
});
