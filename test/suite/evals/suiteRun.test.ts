// The agreed eval suite in a real extension host on the embedded engine: a suite file of two entries on
// the same arithmetic problems (a product entry from an *.eval.json, a benchmark entry inline) gets no
// problem in the editor and its CodeLens; "Tinker: Run Suite on Checkpoint" runs it on a base model
// through the core runSuite (real HTTP, the real Python grader) and the suite panel shows the result
// by layer with intervals and n; a second checkpoint's run, then "Tinker: Compare Suites", shows both
// side by side with each entry's paired difference and the gate's verdict and reasons.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import type { SuiteOutcome } from '../../../src/vscode/evals/suiteRunner';
import type { SuitePanel } from '../../../src/vscode/evals/suitePanel';
import { SuiteSnapshot } from '../../../src/protocol/suiteProtocol';
import type { SuiteEntryResult } from '../../../src/core/suite/contract';
import { useLocalEngineAndRunsFolder, waitFor } from '../helpers';

const ARITH = 'tinker-studio/arith-gpt';
const RANDOM = 'tinker-studio/random-gpt';

suite('eval suite: run on a checkpoint, the suite panel, Compare Suites', function () {
  this.timeout(300_000);
  const state = useLocalEngineAndRunsFolder('tinker-suite-');
  let api: TinkerStudioTestHandles;
  let dir: string;
  let suiteFile: string;

  suiteSetup(() => {
    api = state.api();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-suite-files-'));
    const examples = path.join(__dirname, '../../../../examples/arithmetic');
    const problems = fs.readFileSync(path.join(examples, 'holdout.jsonl'), 'utf8').split('\n').filter(Boolean).slice(0, 6);
    fs.writeFileSync(path.join(dir, 'holdout.jsonl'), problems.join('\n') + '\n');
    fs.copyFileSync(path.join(examples, 'reward.py'), path.join(dir, 'reward.py'));
    const sampling = { n: 2, temperature: 1, max_tokens: 6, seed: 0, backend: 'local', renderer: 'chatml' };
    fs.writeFileSync(path.join(dir, 'holdout.eval.json'), JSON.stringify({ dataset: { path: 'holdout.jsonl' }, grader: { file: 'reward.py' }, ...sampling, targets: [ARITH] }, null, 2));
    suiteFile = path.join(dir, 'arith.suite.json');
    const suiteSpec = {
      entries: [
        { eval: 'holdout.eval.json', layer: 'product', gate: { non_inferiority: 0.02 } },
        // inline, on the same problems and sampling: its samples are shared; a floor no reward reaches
        { name: 'mean-reward', eval: { dataset: { path: 'holdout.jsonl' }, grader: { file: 'reward.py' }, ...sampling, targets: [ARITH] }, layer: 'benchmark', metric: 'reward', gate: { min: 2 } },
      ],
    };
    fs.writeFileSync(suiteFile, JSON.stringify(suiteSpec, null, 2) + '\n');
  });
  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const lensTitles = async () => ((await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', vscode.Uri.file(suiteFile))) ?? []).map((l) => l.command?.title ?? '');
  const snapshotOf = (panel: SuitePanel, what: string, ok: (s: SuiteSnapshot) => boolean) => waitFor(what, () => (panel.snapshot && ok(panel.snapshot) ? panel.snapshot : undefined), 30_000);

  test('the suite file in the editor: no problem, and its CodeLens runs it', async () => {
    const doc = await vscode.workspace.openTextDocument(suiteFile);
    await vscode.window.showTextDocument(doc);
    const titles = await waitFor('the CodeLens', async () => ((await lensTitles()).length ? lensTitles() : undefined));
    assert.deepStrictEqual(titles, ['$(play) Run suite on…']);
    // a name given twice is underlined, and clears when fixed
    const edit = new vscode.WorkspaceEdit();
    const text = doc.getText();
    edit.replace(doc.uri, new vscode.Range(doc.positionAt(text.indexOf('"mean-reward"')), doc.positionAt(text.indexOf('"mean-reward"') + '"mean-reward"'.length)), '"holdout"');
    await vscode.workspace.applyEdit(edit);
    const dup = await waitFor('the duplicate name diagnostic', () => api.suiteDiagnostics.get(doc.uri).find((d) => /used twice/.test(d.message)));
    assert.strictEqual(doc.getText(dup.range), '"holdout"', 'underlined at the second name');
    const back = new vscode.WorkspaceEdit();
    back.replace(doc.uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), text);
    await vscode.workspace.applyEdit(back);
    await waitFor('no diagnostic once fixed', () => (api.suiteDiagnostics.get(doc.uri).length === 0 && doc.getText() === text ? true : undefined));
    assert.ok(await doc.save());
  });

  test('Run Suite on Checkpoint: the result by layer, with intervals and n, in the suite panel', async () => {
    const outcome = await vscode.commands.executeCommand<SuiteOutcome>('tinker.runSuite', { suiteFile, checkpoint: ARITH });
    assert.ok(outcome?.result, 'the command reports its outcome');
    assert.strictEqual(outcome.cancelled, false);
    assert.strictEqual(outcome.result.complete, true);
    const panel = api.suites.get({ suiteFile, checkpoints: [ARITH] });
    assert.ok(panel, 'the suite panel opened on the checkpoint');
    assert.ok(/script-src 'nonce-[^']+'/.test(panel.panel.webview.html), 'scripts by nonce');
    const snap = await snapshotOf(panel, 'the panel with the complete result', (s) => s.columns[0]!.complete);
    assert.deepStrictEqual(snap.columns.map((c) => [c.path, c.hasResult, c.stale]), [[ARITH, true, []]]);
    assert.deepStrictEqual(snap.rows.map((r) => [r.entry, r.layer, r.metric, r.gate]), [['holdout', 'product', 'pass@1', 'non-inferiority δ 0.02'], ['mean-reward', 'benchmark', 'reward', '≥ 2']]);
    // each value is the result file's, with its interval and the 6 problems behind it
    for (const [i, r] of snap.rows.entries()) {
      const e: SuiteEntryResult = outcome.result.entries[i]!;
      assert.deepStrictEqual(r.values, [{ estimate: { mean: e.estimate.value, lo: e.estimate.lo, hi: e.estimate.hi }, n: 6 }]);
      assert.ok(e.estimate.lo! <= e.estimate.value && e.estimate.value <= e.estimate.hi!);
    }
    assert.strictEqual(snap.passed, undefined, 'one checkpoint: no verdict');
    assert.deepStrictEqual(await lensTitles(), ['$(play) Run suite on…', '$(table) Results (1)']);
  });

  test('Compare Suites: both checkpoints side by side, the paired difference and the gate’s verdicts', async () => {
    const second = await vscode.commands.executeCommand<SuiteOutcome>('tinker.runSuite', { suiteFile, checkpoint: RANDOM });
    assert.strictEqual(second?.result?.complete, true);
    assert.deepStrictEqual(await lensTitles(), ['$(play) Run suite on…', '$(table) Results (2)', '$(diff) Compare Suites']);
    const panel = await vscode.commands.executeCommand<SuitePanel>('tinker.compareSuites', { suiteFile, checkpoints: [ARITH, RANDOM] });
    assert.ok(panel);
    assert.strictEqual(api.suites.get({ suiteFile, checkpoints: [ARITH, RANDOM] }), panel);
    const snap = await snapshotOf(panel, 'the comparison', (s) => s.rows.every((r) => r.comparison));
    assert.deepStrictEqual(snap.columns.map((c) => c.path), [ARITH, RANDOM]);
    assert.ok(snap.rows.every((r) => r.values.every((v) => v?.n === 6)));
    const [product, benchmark] = snap.rows;
    // non-inferiority on the paired difference over the 6 problems both have: passes exactly when its lower bound ≥ −δ
    const c = product!.comparison!;
    assert.strictEqual(c.items, 6);
    assert.ok(c.diff && c.diff.lo !== undefined);
    // A − B over the same problems: the difference of the columns' means (pass@1: higher is better)
    const [a, b] = product!.values;
    assert.ok(Math.abs(c.diff.mean - (a!.estimate.mean - b!.estimate.mean)) < 1e-9, `A − B: ${c.diff.mean} vs ${a!.estimate.mean} − ${b!.estimate.mean}`);
    assert.strictEqual(c.passed, c.diff.lo >= -0.02);
    assert.strictEqual(c.checks.length, 1);
    assert.match(c.checks[0]!.reason, /^holdout: pass@1 .* vs production .*; paired difference .* over 6 items \(higher is better\), lower bound /);
    // the floor no mean reward reaches fails, with its reason
    assert.strictEqual(benchmark!.comparison!.passed, false);
    assert.deepStrictEqual(benchmark!.comparison!.checks.map((x) => [x.rule, x.passed]), [['min', false]]);
    assert.match(benchmark!.comparison!.checks[0]!.reason, /^mean-reward: reward \S+ < 2 \(floor\)$/);
    assert.strictEqual(snap.passed, false);
  });
});
