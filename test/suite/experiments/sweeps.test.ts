// Sweeps run from the extension host on the embedded local engine (real HTTP, real Python rewards):
// Start Sweep on a 4-run sweep file, Cancel Sweep while its first run is mid-way, Resume Sweep from the
// Runs view's sweep node until it completes — every run's metrics.jsonl has each step exactly once —
// two runs stopped early by the median rule, the sweep node (progress, children, menu state, tooltip),
// the sweep file's CodeLenses, Compare from the node, a second start skipping everything, and a bad
// point that stops anything from starting.
//
// The median rule is made deterministic by ranking on `optim/lr` (the learning rate the loop logs at
// every step; maximize): with max_concurrent 1 the runs go in the grid's order 0.001, 0.004, 0.002,
// 0.0005, and with min_iter 1 and min_runs 1 the third and fourth are below the median of the runs
// before them at step 1, so they stop there, while the first two complete.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { SweepResult } from '../../../src/core/experiments/runSweep';
import { medianStops } from '../../../src/core/experiments/medianRule';
import { readMetricsRowsSync } from '../../../src/core/runs/runDirectory';
import type { ComparePanel } from '../../../src/vscode/experiments/comparePanel';
import type { SweepNode } from '../../../src/vscode/runs/sweepItems';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { checkpointNames, jsonlField, writeTinySpec } from '../runs/grpoFixtures';
import { useLocalEngineAndRunsFolder, waitFor } from '../helpers';

const RUN_TIMEOUT = 300_000;
const POINTS = ['learning_rate_0.001', 'learning_rate_0.004', 'learning_rate_0.002', 'learning_rate_0.0005'];
const METRIC = { name: 'optim/lr', goal: 'maximize' as const };
const RULE = { min_iter: 1, min_runs: 1 };

/** Every step of a run's metrics.jsonl, one entry per line (a repeated step shows twice). */
const rawSteps = (runDir: string): number[] => jsonlField<number>(runDir, 'metrics.jsonl', 'step');

function writeSweep(specFile: string, name: string, extra: Record<string, unknown> = {}): string {
  const file = path.join(path.dirname(specFile), `${name}.sweep.json`);
  const sweep = {
    base: path.basename(specFile),
    name,
    method: 'grid',
    parameters: { learning_rate: { values: [0.001, 0.004, 0.002, 0.0005] } },
    metric: METRIC,
    early_terminate: { type: 'median', ...RULE },
    ...extra,
  };
  fs.writeFileSync(file, JSON.stringify(sweep, null, 2) + '\n');
  return file;
}

suite('Sweeps from the extension host', function () {
  this.timeout(RUN_TIMEOUT);
  const suiteState = useLocalEngineAndRunsFolder('tinker-sweeps-');
  let api: TinkerStudioTestHandles;
  let sweepFile: string;
  let sweepDir: string;
  /** steps the first run had logged when the cancel took effect */
  let stepsBeforeCancel = 0;

  suiteSetup(() => {
    api = suiteState.api();
    const spec = writeTinySpec({ name: 'sweepbase', iterations: 3, holdout: false });
    sweepFile = writeSweep(spec, 'lr-host');
    sweepDir = path.join(suiteState.runsDir(), 'lr-host');
  });

  const node = async (): Promise<SweepNode | undefined> => (await api.runsTree.sweepNodes()).find((n) => n.dir === sweepDir);
  const lenses = async () => (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', vscode.Uri.file(sweepFile))) ?? [];

  test('the sweep file offers Start Sweep before its folder exists', async () => {
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(sweepFile));
    const l = await waitFor('the sweep CodeLens', async () => ((await lenses()).length ? lenses() : undefined));
    assert.deepStrictEqual(l.map((x) => [x.command?.title, x.command?.command]), [['$(play) Start Sweep', 'tinker.startSweep']]);
    assert.strictEqual(l[0]!.range.start.line, 0);
  });

  test('Start Sweep runs on the local engine; Cancel Sweep stops it mid-run, the run keeps its resume point and the rest stay queued', async () => {
    let cancelAsked = false;
    const sub = api.registry.onDidReceiveEvent(({ run, event }) => {
      // the first run has logged its first step: cancel the sweep (through the command) while it trains
      if (!cancelAsked && run.runName === POINTS[0] && event.type === 'metrics') {
        cancelAsked = true;
        void vscode.commands.executeCommand('tinker.cancelSweep', { sweepDir });
      }
    });
    let r: SweepResult | undefined;
    try {
      r = await vscode.commands.executeCommand<SweepResult | undefined>('tinker.startSweep', vscode.Uri.file(sweepFile));
    } finally {
      sub.dispose();
    }
    assert.ok(r, 'the command returns the sweep result');
    assert.strictEqual(r.dir, sweepDir, 'the sweep folder is <runs folder>/<sweep name>');
    assert.ok(cancelAsked, 'the first run reported metrics');
    assert.strictEqual(r.cancelled, true);
    assert.deepStrictEqual(r.outcomes.map((o) => [o.name, o.status]), [[POINTS[0], 'cancelled'], [POINTS[1], 'queued'], [POINTS[2], 'queued'], [POINTS[3], 'queued']]);
    const first = path.join(sweepDir, POINTS[0]!);
    const steps = rawSteps(first);
    assert.ok(steps.length >= 1 && steps.length < 3, `the first run stopped before its end (steps ${steps.join(',')})`);
    assert.deepStrictEqual(steps, [...steps.keys()], 'its steps so far, each once');
    stepsBeforeCancel = steps.length;
    assert.ok(!checkpointNames(first).includes('final'), 'no final checkpoint: it was cancelled');
    assert.ok(!fs.existsSync(path.join(sweepDir, POINTS[1]!)), 'queued runs did not start');
    assert.strictEqual(api.sweeps.active().length, 0, 'the sweep is no longer running');

    const n = await waitFor('the sweep node with its cancelled run', async () => {
      const x = await node();
      return x && x.runs.length === 1 ? x : undefined;
    });
    const item = api.runsTree.getTreeItem(n);
    assert.strictEqual(item.label, 'lr-host');
    assert.strictEqual(item.description, '0/4 done');
    assert.strictEqual(item.contextValue, 'tinker.sweep:resumable');
    const [child] = await api.runsTree.getChildren(n);
    assert.ok(child && child.kind === 'run');
    assert.strictEqual(child.run.dir, first);
    assert.strictEqual(child.status, 'cancelled');
    assert.strictEqual(api.runsTree.getTreeItem(child).contextValue, 'tinker.run:resumable');
    const top = await api.runsTree.getChildren();
    assert.ok(!top.some((x) => x.kind === 'run' && x.run.dir.startsWith(sweepDir + path.sep)), 'runs of the sweep are under its node, not beside it');

    const l = await waitFor('Resume Sweep and Compare Runs lenses', async () => {
      const got = await lenses();
      return got.some((x) => x.command?.command === 'tinker.openComparison') ? got : undefined;
    });
    assert.deepStrictEqual(l.map((x) => x.command?.title), ['$(debug-continue) Resume Sweep (0/4 done)', '$(graph-line) Compare Runs (1)']);
    assert.deepStrictEqual(l[1]!.command?.arguments, [{ sweepDir }]);
  });

  test('Resume Sweep on the node resumes the cancelled run, runs the rest, and the median rule stops two; no step is repeated or lost', async () => {
    const n = await node();
    assert.ok(n);
    const resumed = vscode.commands.executeCommand<SweepResult | undefined>('tinker.resumeSweep', n);
    // while it runs, the node says so (and its menu offers Cancel Sweep), and the sweep file's CodeLens shows Cancel Sweep
    const live = await waitFor(
      'the sweep node showing a running run',
      async () => {
        const x = await node();
        const item = x && api.runsTree.getTreeItem(x);
        return item && item.contextValue === 'tinker.sweep:running' && /^\d\/4 done, 1 running/.test(String(item.description)) ? item : undefined;
      },
      RUN_TIMEOUT,
    );
    assert.match(String(live.description), /^\d\/4 done, 1 running/);
    const running = await waitFor('the Cancel Sweep lens', async () => ((await lenses()).some((x) => x.command?.command === 'tinker.cancelSweep') ? lenses() : undefined), RUN_TIMEOUT);
    assert.match(String(running[0]!.command?.title), /^\$\(sync~spin\) Sweep lr-host: \d\/4 done, running learning_rate_/);
    const r = await resumed;
    assert.ok(r);
    assert.strictEqual(r.cancelled, false);
    assert.deepStrictEqual(r.outcomes.map((o) => [o.name, o.status]), [[POINTS[0], 'completed'], [POINTS[1], 'completed'], [POINTS[2], 'stopped early'], [POINTS[3], 'stopped early']]);
    assert.deepStrictEqual(r.outcomes.map((o) => o.stepsRun), [3 - stepsBeforeCancel, 3, 2, 2], 'the first run ran only the steps its cancel left');
    assert.deepStrictEqual(r.outcomes.map((o) => o.stepsSaved), [0, 0, 1, 1]);
    // every step exactly once in every run's metrics.jsonl: the cancelled run resumed where it stopped
    assert.deepStrictEqual(
      POINTS.map((p) => rawSteps(path.join(sweepDir, p))),
      [[0, 1, 2], [0, 1, 2], [0, 1], [0, 1]],
    );
    for (const p of POINTS.slice(0, 2)) assert.ok(checkpointNames(path.join(sweepDir, p)).includes('final'), `${p} has its final checkpoint`);
    for (const p of POINTS.slice(2)) {
      const marker = JSON.parse(fs.readFileSync(path.join(sweepDir, p, 'stopped_early.json'), 'utf8')) as { step: number; steps_saved: number };
      assert.deepStrictEqual([marker.step, marker.steps_saved], [1, 1], `${p} records where it stopped`);
      assert.ok(checkpointNames(path.join(sweepDir, p)).length > 0, `${p} keeps its checkpoints`);
    }
    // the recorded curves say the same: at step 1 each stopped run is below the median of the runs before it
    const curve = (p: string, completed: boolean) => ({ id: p, rows: readMetricsRowsSync(path.join(sweepDir, p)), completed });
    assert.strictEqual(medianStops(curve(POINTS[2]!, false), [curve(POINTS[0]!, true), curve(POINTS[1]!, true)], 1, METRIC, RULE), true);
    assert.strictEqual(medianStops(curve(POINTS[1]!, false), [curve(POINTS[0]!, true)], 1, METRIC, RULE), false, 'the better run was not stopped');
    assert.deepStrictEqual(r.ranking.map((x) => [x.id, x.rank]), [[POINTS[1], 1], [POINTS[2], 2], [POINTS[0], 3], [POINTS[3], 4]]);
  });

  test('the sweep node: done with two stopped early, its runs under it in the sweep order (stopped ones greyed), the metric and best run in its tooltip', async () => {
    const n = await waitFor('the finished sweep node', async () => {
      const x = await node();
      return x && x.runs.length === 4 && x.statuses.filter((s) => s === 'stopped early').length === 2 ? x : undefined;
    });
    const item = api.runsTree.getTreeItem(n);
    assert.strictEqual(item.description, '4/4 done · 2 stopped early');
    assert.strictEqual(item.contextValue, 'tinker.sweep:done');
    const children = await api.runsTree.getChildren(n);
    assert.deepStrictEqual(children.map((c) => (c.kind === 'run' ? [c.run.name, c.status] : [c.kind])), [[POINTS[0], 'completed'], [POINTS[1], 'completed'], [POINTS[2], 'stopped early'], [POINTS[3], 'stopped early']]);
    const stoppedItem = api.runsTree.getTreeItem(children[2]!);
    assert.ok(stoppedItem.iconPath instanceof vscode.ThemeIcon);
    assert.strictEqual((stoppedItem.iconPath.color as vscode.ThemeColor | undefined)?.id, 'disabledForeground', 'a stopped-early run is greyed');
    assert.strictEqual(stoppedItem.contextValue, 'tinker.run:done', 'a stopped-early run is not resumable');
    const resolved = await api.runsTree.resolveTreeItem(item, n);
    const tip = (resolved.tooltip as vscode.MarkdownString).value;
    assert.match(tip, /optim\/lr/);
    assert.match(tip, /Swept: `learning_rate`/);
    assert.match(tip, /Best run: `learning_rate_0\.004`/);
    const l = await waitFor('the done lens', async () => ((await lenses()).some((x) => /4\/4 done/.test(x.command?.title ?? '')) ? lenses() : undefined));
    assert.deepStrictEqual(l.map((x) => x.command?.title), ['$(pass) Sweep lr-host: 4/4 done · 2 stopped early', '$(graph-line) Compare Runs (4)']);
  });

  test('Compare on the sweep node opens the comparison of its four runs, ranked by its metric, the best first', async () => {
    const n = await node();
    assert.ok(n);
    // a tree's context menu passes the node and the selection
    const panel = await vscode.commands.executeCommand<ComparePanel | undefined>('tinker.openComparison', n, [n]);
    assert.ok(panel, 'the command resolves to the panel');
    const data = await panel.data();
    assert.deepStrictEqual(
      data.runs.map((x) => [x.name, x.rank, x.status]).sort((a, b) => Number(a[1]) - Number(b[1])),
      [[POINTS[1], 1, 'completed'], [POINTS[2], 2, 'stopped early'], [POINTS[0], 3, 'completed'], [POINTS[3], 4, 'stopped early']],
    );
    assert.deepStrictEqual(data.sweep?.swept, ['learning_rate']);
    panel.panel.dispose();
  });

  test('starting the finished sweep again skips every run: no step is added', async () => {
    const before = POINTS.map((p) => rawSteps(path.join(sweepDir, p)));
    const r = await vscode.commands.executeCommand<SweepResult | undefined>('tinker.startSweep', { sweepFile });
    assert.ok(r);
    assert.deepStrictEqual(r.outcomes.map((o) => o.status), ['skipped', 'skipped', 'skipped', 'skipped']);
    assert.deepStrictEqual(POINTS.map((p) => rawSteps(path.join(sweepDir, p))), before);
  });

  test('a sweep with a bad point starts nothing', async () => {
    const spec = writeTinySpec({ name: 'badbase', iterations: 1, holdout: false });
    const bad = writeSweep(spec, 'bad-host', { parameters: { learning_rate: { values: [0.001, -5] } } });
    const r = await vscode.commands.executeCommand<SweepResult | undefined>('tinker.startSweep', { sweepFile: bad });
    assert.strictEqual(r, undefined);
    assert.ok(!fs.existsSync(path.join(suiteState.runsDir(), 'bad-host')), 'no sweep folder, no run');
  });
});
