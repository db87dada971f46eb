// The Compare Runs panel's host side in a real extension host, with its real webview, driven through
// a recording transport: Compare Runs over two arithmetic GRPO run directories (as the loop writes
// them, with progress/tokens_trained) and a Python tinker-cookbook run directory (NaN, an async
// evaluation line, a partial last line); live rows as a metrics.jsonl grows; a chart click; the
// command's arguments; a sweep folder ranked by its metric.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { Redactor } from '../../../src/core/config/redact';
import { Log } from '../../../src/vscode/common/log';
import { ComparePanels, comparePanels } from '../../../src/vscode/experiments/comparePanels';
import { ChartLines, type ChartsParams, type DecodedChartLines, type ToWebview } from '../../../src/protocol/compareProtocol';
import { activateExtension, EXTENSION_ID, waitFor } from '../helpers';
import { TransportRecorder } from '../common/recordingTransport';

type Snapshot = Extract<ToWebview, { type: 'snapshot' }>;
type RunMsg = Extract<ToWebview, { type: 'run' }>;

/** Asks the host for charts as the webview does and returns its reply's charts. */
async function requestCharts(transport: ReturnType<TransportRecorder['of']>, id: number, params: ChartsParams): Promise<DecodedChartLines[]> {
  await transport.deliver({ type: 'request', id, method: 'charts', params });
  const reply = await waitFor('the charts reply', () => transport.sent.find((m) => (m as { id?: number }).id === id) as { ok: boolean; value?: { charts: unknown[] }; error?: string } | undefined);
  assert.ok(reply.ok, reply.error);
  // as the webview takes them: checked and decoded
  return reply.value!.charts.map((c) => ChartLines.parse(c));
}

const root = () => fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-compare-'));

/** An arithmetic GRPO run directory as the loop writes it: config.json and one metrics line per step. */
function arithRun(parent: string, name: string, lr: number, rewards: number[], extra: Record<string, unknown> = {}): string {
  const dir = path.join(parent, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_name: 'tinker-studio/arith-gpt', learning_rate: lr, group_size: 4, sampling: { temperature: 1 }, ...extra }, null, 2));
  let tokens = 0;
  const lines = rewards.map((r, step) => {
    tokens += 100;
    return JSON.stringify({ step, 'env/all/reward/total': r, 'optim/lr': lr, 'time/total': 0.5, 'progress/tokens_trained': tokens, ...(step % 2 === 0 ? { 'test/env/all/reward/total': r / 2 } : {}) });
  });
  fs.writeFileSync(path.join(dir, 'metrics.jsonl'), lines.join('\n') + '\n');
  return dir;
}

function cookbookRun(parent: string): string {
  const dir = path.join(parent, 'math-rl');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_name: 'Qwen/Qwen3-8B', learning_rate: 4e-5, log_path: dir }));
  fs.writeFileSync(
    path.join(dir, 'metrics.jsonl'),
    [
      '{"step": 0, "env/all/reward/total": 0.25, "optim/kl_sample_train_v1": NaN, "time/total": 12.5}',
      '{"step": 1, "env/all/reward/total": 0.375, "time/total": 11}',
      '{"step": 1, "test/env/all/reward/total": 0.3}',
      '{"step": 2, "env/all/rew',
    ].join('\n'),
  );
  return dir;
}

/** Chart y values travel as Float32 (compareProtocol.ts ChartLines): what the webview gets for these. */
const f32 = (xs: (number | null)[]) => xs.map((v) => (v === null ? null : Math.fround(v)));

suite('Compare Runs panel', function () {
  this.timeout(60_000);
  let api: TinkerStudioTestHandles;
  let log: Log;
  let recorder: TransportRecorder;
  let panels: ComparePanels;
  let opened: Array<{ runDir: string; step: number }>;
  let cacheFolder: string;

  suiteSetup(async () => {
    api = await activateExtension();
    log = new Log(new Redactor(), 'Tinker (test)');
  });
  suiteTeardown(() => log.dispose());

  setup(() => {
    recorder = new TransportRecorder();
    opened = [];
    cacheFolder = root();
    panels = comparePanels(
      {
        extensionUri: vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri,
        log,
        registry: api.registry,
        cacheFolder,
        openIteration: async (runDir, step) => {
          opened.push({ runDir, step });
          return true;
        },
        compareSamples: async () => undefined,
      },
      recorder.factory,
    );
  });

  teardown(async () => {
    panels.dispose();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('two arithmetic runs and a cookbook run: the differing config fields, result columns by run, the union of metrics, colours', async () => {
    const parent = root();
    const a = arithRun(parent, 'arith-lr1', 1e-3, [0.1, 0.5, 0.4, 0.6]);
    const b = arithRun(parent, 'arith-lr4', 4e-3, [0.2, 0.3, 0.7]);
    const c = cookbookRun(parent);
    const panel = await panels.open({ runDirs: [a, b, c] });
    const transport = recorder.of(panel.panel);
    const snap = await waitFor('the snapshot', () => transport.ofType<Snapshot>('snapshot').at(-1), 30_000);
    assert.strictEqual(snap.title, 'Compare: 3 runs');
    assert.deepStrictEqual(snap.runs.map((r) => r.name), ['arith-lr1', 'arith-lr4', 'math-rl']);
    assert.deepStrictEqual(snap.runs.map((r) => r.color), [0, 1, 2]);
    assert.deepStrictEqual(snap.differing, ['group_size', 'learning_rate', 'model_name', 'sampling.temperature']);
    assert.deepStrictEqual(snap.identical, ['log_path'], 'where a run lives differs between any two runs: only behind "show all"');
    assert.strictEqual(snap.runs[0]!.config['learning_rate'], '0.001');
    assert.strictEqual(snap.runs[2]!.config['sampling.temperature'], undefined);
    // as the webview receives them (JSON: no undefined fields)
    const [ra, rb, rc] = snap.runs.map((r) => JSON.parse(JSON.stringify(r.results)) as typeof r.results);
    assert.deepStrictEqual(ra, { kind: 'grpo', steps: 4, lastStep: 3, wallTime: 2, tokensTrained: 400, values: { finalTrainReward: 0.6, bestTrainReward: 0.6, bestHoldoutReward: 0.2, bestHoldoutStep: 2 } });
    assert.strictEqual(rb!.values.bestTrainReward, 0.7);
    assert.strictEqual(rb!.values.bestHoldoutReward, 0.35);
    // the cookbook run: NaN is a gap, the async evaluation line joins step 1, the partial line waits
    assert.deepStrictEqual(rc, { kind: 'grpo', steps: 2, lastStep: 1, wallTime: 23.5, values: { finalTrainReward: 0.375, bestTrainReward: 0.375, bestHoldoutReward: 0.3, bestHoldoutStep: 1 } });
    const held = (await panel.data()).columns.get(c)!;
    assert.deepStrictEqual(held.cols['optim/kl_sample_train_v1'], [null, null]);
    assert.deepStrictEqual(held.cols['progress/tokens_trained'], undefined, 'the cookbook does not log tokens trained');
    assert.ok(snap.runs[2]!.keys.includes('optim/kl_sample_train_v1'));
    assert.ok(!snap.runs[2]!.keys.includes('progress/tokens_trained'));
    // the snapshot carries no points: the webview asks for the charts in view
    assert.ok(!JSON.stringify(snap).includes('"cols"'));
    const charts = await requestCharts(transport, 11, { keys: ['env/all/reward/total', 'progress/tokens_trained'], xAxis: 'tokens', smoothing: 0, width: 600 });
    assert.deepStrictEqual(charts[0]!.x, [100, 200, 300, 400]);
    assert.deepStrictEqual(charts[0]!.runs.map((r) => [r.id, r.y, r.steps]), [
      [a, f32([0.1, 0.5, 0.4, 0.6]), [0, 1, 2, 3]],
      [b, f32([0.2, 0.3, 0.7, null]), [0, 1, 2, null]],
      [c, [null, null, null, null], [null, null, null, null]],
    ]);
    assert.deepStrictEqual(charts[1]!.runs.map((r) => r.id), [a, b], 'only the runs that have the metric');
    assert.deepStrictEqual(snap.problems, []);
    assert.ok(/script-src 'nonce-[^']+'/.test(panel.panel.webview.html), 'scripts by nonce');
    // the column caches were written in the extension's storage, not in the run directories
    assert.strictEqual(fs.readdirSync(cacheFolder).length, 3);
    assert.ok(!fs.existsSync(path.join(a, '.tinker-cache')));
  });

  test('live: a run whose metrics.jsonl grows is pushed again with the new rows', async () => {
    const parent = root();
    const a = arithRun(parent, 'arith-a', 1e-3, [0.1, 0.2]);
    const b = arithRun(parent, 'arith-b', 4e-3, [0.3]);
    const panel = await panels.open({ runDirs: [a, b] });
    const transport = recorder.of(panel.panel);
    await waitFor('the snapshot', () => transport.ofType<Snapshot>('snapshot').at(-1), 30_000);
    fs.appendFileSync(path.join(b, 'metrics.jsonl'), JSON.stringify({ step: 1, 'env/all/reward/total': 0.9, 'progress/tokens_trained': 200 }) + '\n');
    const msg = await waitFor('the run pushed again', () => transport.ofType<RunMsg>('run').find((m) => m.run.id === b && m.run.results.steps === 2), 30_000);
    const [chart] = await requestCharts(transport, 12, { keys: ['env/all/reward/total'], xAxis: 'step', smoothing: 0, width: 600 });
    assert.deepStrictEqual(chart!.runs.find((r) => r.id === b)!.y, f32([0.3, 0.9]));
    assert.strictEqual(msg.run.results.values.bestTrainReward, 0.9);
    assert.strictEqual(msg.run.results.tokensTrained, 200);
  });

  test('a chart click opens that run’s iteration; a removed run leaves the next snapshot', async () => {
    const parent = root();
    const a = arithRun(parent, 'arith-a', 1e-3, [0.1, 0.2]);
    const b = arithRun(parent, 'arith-b', 4e-3, [0.3]);
    const panel = await panels.open({ runDirs: [a, b] });
    const transport = recorder.of(panel.panel);
    await waitFor('the snapshot', () => transport.ofType<Snapshot>('snapshot').at(-1), 30_000);
    const before = transport.ofType<Snapshot>('snapshot').length;
    await transport.deliver({ type: 'request', id: 7, method: 'openIteration', params: { runDir: b, step: 0 } });
    const reply = await waitFor('the reply', () => transport.sent.find((m) => (m as { id?: number }).id === 7) as { ok: boolean; result?: unknown } | undefined);
    assert.deepStrictEqual(reply, { type: 'reply', id: 7, ok: true, value: { opened: true } });
    assert.deepStrictEqual(opened, [{ runDir: b, step: 0 }]);
    await transport.deliver({ type: 'removeRun', id: a });
    const snap = await waitFor('a snapshot without the removed run', () => (transport.ofType<Snapshot>('snapshot').length > before ? transport.ofType<Snapshot>('snapshot').at(-1) : undefined), 30_000);
    assert.deepStrictEqual(snap.runs.map((r) => r.name), ['arith-b']);
  });

  test('a sweep folder: runs ranked by the sweep metric, the best marked rank 1, sensitivity per swept field', async () => {
    const sweepDir = path.join(root(), 'lr-sweep');
    const x = arithRun(sweepDir, 'learning_rate_0.001', 1e-3, [0.1, 0.3], { sweep: { name: 'lr-sweep', point: { learning_rate: 1e-3 } } });
    arithRun(sweepDir, 'learning_rate_0.004', 4e-3, [0.2, 0.8], { sweep: { name: 'lr-sweep', point: { learning_rate: 4e-3 } } });
    fs.writeFileSync(
      path.join(sweepDir, 'sweep.json'),
      JSON.stringify({
        kind: 'sweep',
        name: 'lr-sweep',
        file: path.join(sweepDir, 'lr.sweep.json'),
        metric: { name: 'env/all/reward/total', goal: 'maximize' },
        swept: ['learning_rate'],
        runs: [
          { name: 'learning_rate_0.001', point: { learning_rate: 1e-3 } },
          { name: 'learning_rate_0.004', point: { learning_rate: 4e-3 } },
        ],
      }),
    );
    const panel = await vscode.commands.executeCommand<unknown>('tinker.openComparison', { sweepDir });
    assert.ok(panel, 'the command resolves to the panel');
    const mine = await panels.open({ runDirs: [], sweepDir });
    const transport = recorder.of(mine.panel);
    const snap = await waitFor('the snapshot', () => transport.ofType<Snapshot>('snapshot').at(-1), 30_000);
    assert.strictEqual(snap.title, 'Compare: sweep lr-sweep');
    assert.deepStrictEqual(snap.runs.map((r) => [r.name, r.rank, r.best]), [['learning_rate_0.001', 2, 0.3], ['learning_rate_0.004', 1, 0.8]]);
    assert.ok(snap.sweep);
    assert.deepStrictEqual(snap.sweep.sensitivity[0]!.points.map((p) => [p.x, p.y]), [[1e-3, 0.3], [4e-3, 0.8]]);
    assert.strictEqual(snap.sweep.parallel, undefined, 'one swept field: no parallel coordinates');
    assert.ok(snap.differing.includes('sweep.point.learning_rate'));
    assert.ok(fs.existsSync(x));
  });

  test('tinker.openComparison refuses an argument it does not know: no panel opens', async () => {
    const before = api.compare.all().length;
    const r = await vscode.commands.executeCommand('tinker.openComparison', { runDirs: 'not-a-list' });
    assert.strictEqual(r, undefined);
    assert.strictEqual(api.compare.all().length, before);
  });
});
