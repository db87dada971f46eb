// The evaluation results panel in a real extension host with its real webview: opened by "Tinker:
// Open Eval Results" on a results folder; its snapshot (targets in the spec's order, baseline,
// metrics with intervals, comparisons, the per-problem matrix); a matrix cell's diff of two targets
// (the documents' text); What changed between two targets, improved first, then regressed.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { Redactor } from '../../../src/core/config/redact';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { Log } from '../../../src/vscode/common/log';
import { evalPanels } from '../../../src/vscode/evals/evalPanels';
import { EvalSnapshot } from '../../../src/protocol/evalsProtocol';
import { activateExtension, EXTENSION_ID, waitFor } from '../helpers';
import { TransportRecorder } from '../common/recordingTransport';
import { rewardOf, writeEvalResults } from './evalFixture';

function resultsFolder(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-evalpanel-'));
  fs.writeFileSync(path.join(root, 'holdout.eval.json'), '{}\n');
  return writeEvalResults(path.join(root, 'evals', 'holdout'), { checkpoints: 2, problems: 12, n: 2 });
}

suite('evaluation results panel', function () {
  this.timeout(60_000);
  let api: TinkerStudioTestHandles;
  let log: Log;

  suiteSetup(async () => {
    api = await activateExtension();
    log = new Log(new Redactor(), 'Tinker (test)');
  });

  suiteTeardown(() => log.dispose());

  teardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('Open Eval Results on a results folder opens its panel once, with a strict CSP', async () => {
    const dir = resultsFolder();
    assert.strictEqual(await vscode.commands.executeCommand('tinker.openEvalResults', { dir }), true);
    const panel = api.evals.get({ dir });
    assert.ok(panel);
    assert.strictEqual(await vscode.commands.executeCommand('tinker.openEvalResults', vscode.Uri.file(dir)), true);
    assert.strictEqual(api.evals.get({ dir }), panel);
    assert.ok(/script-src 'nonce-[^']+'/.test(panel.panel.webview.html), 'scripts by nonce');
    // a folder without results is refused (the command shows the error and opens nothing)
    assert.strictEqual(await vscode.commands.executeCommand('tinker.openEvalResults', { dir: path.dirname(dir) }), undefined);
    assert.strictEqual(api.evals.get({ dir: path.dirname(dir) }), undefined);
  });

  test('the snapshot, a cell’s diff of two targets, and What changed (improved first)', async () => {
    const dir = resultsFolder();
    const recorder = new TransportRecorder();
    const extensionUri = vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri;
    const panels = evalPanels({ extensionUri, log }, recorder.factory);
    try {
      const panel = await panels.open({ dir });
      const transport = recorder.of(panel.panel);
      const snap = await waitFor('the snapshot', () => transport.sent.map((m) => EvalSnapshot.safeParse(m)).find((r) => r.success)?.data, 30_000);
      assert.strictEqual(snap.name, 'holdout');
      assert.deepStrictEqual(snap.targets.map((t) => [t.id, t.step]), [['base', undefined], ['arith-000010', 10], ['arith-000020', 20]]);
      assert.strictEqual(snap.baseline, 0);
      assert.deepStrictEqual(snap.metrics.map((m) => m.key), ['reward', 'pass@1', 'stop_rate', 'completion_tokens']);
      assert.strictEqual(snap.problems.length, 12);
      assert.strictEqual(snap.rewards[2]![3], (rewardOf(2, 3, 0) + rewardOf(2, 3, 1)) / 2);
      assert.strictEqual(snap.comparisons[0], null);
      assert.ok(snap.comparisons[1]);
      assert.strictEqual(snap.complete, true);

      await transport.deliver({ type: 'diff', problemId: 'arith:4', left: 0, right: 2 });
      const diff = panel.lastOpened;
      assert.ok(diff && 'left' in diff);
      const left = await vscode.workspace.openTextDocument(vscode.Uri.parse(diff.left));
      const right = await vscode.workspace.openTextDocument(vscode.Uri.parse(diff.right));
      assert.match(left.getText(), /^# base · sample 1 of 2\nproblem:      arith:4\nreward:       1\n/);
      assert.match(right.getText(), /^# arith-000020 · sample 1 of 2\nproblem:      arith:4\n/);
      assert.strictEqual(left.getText().split('# base · sample').length - 1, 2, 'both samples of the problem');
      assert.match(diff.title, /^arith:4: base \(reward 1\) ↔ arith-000020 \(reward /);

      await transport.deliver({ type: 'whatChanged', before: 0, after: 2 });
      const changes = panel.lastOpened;
      assert.ok(changes && 'entries' in changes);
      let expectImproved = 0;
      let expectRegressed = 0;
      for (let p = 0; p < 12; p++)
        for (let k = 0; k < 2; k++) {
          const d = rewardOf(2, p, k) - rewardOf(0, p, k);
          if (d > 0) expectImproved++;
          if (d < 0) expectRegressed++;
        }
      assert.strictEqual(changes.entries.length, expectImproved + expectRegressed);
      const directions = changes.entries.map((e) => (/reward 0 → 1/.test(e.title) ? 'improved' : 'regressed'));
      assert.deepStrictEqual(directions, [...Array(expectImproved).fill('improved'), ...Array(expectRegressed).fill('regressed')]);
      const entry = await vscode.workspace.openTextDocument(vscode.Uri.parse(changes.entries[0]!.right));
      assert.match(entry.getText(), /^# arith-000020 · sample \d of 2\n/);
    } finally {
      panels.dispose();
    }
  });
});
