import * as assert from 'assert';
import { CHARTS, FromWebview, MetricsPanelState, MetricsRequests, ToWebview, toMetricRow } from '../../../src/protocol/metricsProtocol';
import { Envelope, Reply } from '../../../src/protocol/panelProtocol';
import { emaSmooth } from '../../../webview/shared/smoothing';

describe('metrics panel protocol', () => {
  it('a metrics record becomes a row of its numeric values, non-finite ones as null', () => {
    assert.deepStrictEqual(toMetricRow({ step: 3, a: 0.5, b: NaN, c: Infinity, d: 'text', e: null }), {
      step: 3,
      values: { a: 0.5, b: null, c: null },
    });
  });

  it('rows survive the JSON transport of webview messages unchanged', () => {
    const msg = { type: 'snapshot', run: { name: 'r', dir: '/x/r', status: 'running', progress: { step: 1, endStep: 5, phase: 'sampling' } }, rows: [toMetricRow({ step: 0, kl: NaN, r: 1 })], problems: [] };
    const back = ToWebview.parse(JSON.parse(JSON.stringify(msg)));
    assert.deepStrictEqual(back, msg);
  });

  it('messages from the webview are checked: unknown types, missing fields and oversized reports are refused', () => {
    assert.ok(FromWebview.safeParse({ type: 'showLog' }).success);
    for (const bad of [null, 'ready', { type: 'ready' }, { type: 'nope' }, { type: 'webviewError' }, { type: 'webviewError', message: 'x'.repeat(4001) }]) {
      assert.ok(!FromWebview.safeParse(bad).success, JSON.stringify(bad)?.slice(0, 40));
    }
  });

  it('the envelope: ready, requests with a non-negative id, cancels; replies are ok with a value or failed with an error', () => {
    assert.ok(Envelope.safeParse({ type: 'ready' }).success);
    assert.ok(Envelope.safeParse({ type: 'request', id: 3, method: 'openIteration', params: { step: 1 } }).success);
    assert.ok(Envelope.safeParse({ type: 'cancel', id: 3 }).success);
    for (const bad of [{ type: 'request', id: -1, method: 'x' }, { type: 'request', id: 1.5, method: 'x' }, { type: 'request', id: 1, method: '' }, { type: 'cancel' }]) {
      assert.ok(!Envelope.safeParse(bad).success, JSON.stringify(bad));
    }
    assert.ok(Reply.safeParse({ type: 'reply', id: 1, ok: true, value: { opened: true } }).success);
    assert.ok(Reply.safeParse({ type: 'reply', id: 1, ok: false, error: 'no samples' }).success);
    assert.ok(!Reply.safeParse({ type: 'reply', id: 1, ok: false }).success);
    assert.ok(MetricsRequests.openIteration.params.safeParse({ step: 4 }).success);
    assert.ok(!MetricsRequests.openIteration.params.safeParse({ step: -1 }).success);
  });

  it('restored panel state must name a run directory', () => {
    assert.ok(MetricsPanelState.safeParse({ runDir: '/runs/a', smoothing: 0.6 }).success);
    assert.ok(!MetricsPanelState.safeParse({}).success);
    assert.ok(!MetricsPanelState.safeParse({ runDir: '' }).success);
    assert.ok(!MetricsPanelState.safeParse({ runDir: '/a', smoothing: 2 }).success);
  });

  it('charts plot the cookbook metric names, each once', () => {
    const keys = CHARTS.flatMap((c) => c.series.map((s) => s.key));
    assert.strictEqual(new Set(keys).size, keys.length);
    for (const k of ['env/all/reward/total', 'test/env/all/reward/total', 'env/all/by_group/frac_mixed', 'env/all/by_group/frac_all_good', 'env/all/by_group/frac_all_bad', 'optim/kl_sample_train_v1', 'optim/kl_sample_train_v2', 'optim/entropy', 'env/all/frac_truncated', 'time/total', 'train_mean_nll', 'test/nll', 'optim/lr']) {
      assert.ok(keys.includes(k), k);
    }
  });
});

describe('metrics panel: the cost chart', () => {
  it('charts the cumulative cost estimate in dollars right after reward', () => {
    const i = CHARTS.findIndex((c) => c.id === 'cost');
    assert.strictEqual(CHARTS[i - 1]?.id, 'reward');
    assert.strictEqual(CHARTS[i]!.unit, 'usd');
    assert.deepStrictEqual(CHARTS[i]!.series.map((s) => s.key), ['cost/total_usd']);
    assert.match(`${CHARTS[i]!.title} ${CHARTS[i]!.series[0]!.label}`, /estimate/);
  });
});

describe('EMA smoothing', () => {
  it('weight 0 leaves values as they are', () => {
    assert.deepStrictEqual(emaSmooth([1, 2, 3], 0), [1, 2, 3]);
  });

  it('is debiased: a constant series stays constant from the first point', () => {
    for (const v of emaSmooth([4, 4, 4, 4], 0.9)) assert.ok(Math.abs(v! - 4) < 1e-12);
  });

  it('matches a hand computation at weight 0.5', () => {
    // last: 0.5·0+0.5·2=1 → /(1-0.5)=2; then 0.5·1+0.5·4=2.5 → /(1-0.25)=3.333…
    const [a, b] = emaSmooth([2, 4], 0.5);
    assert.strictEqual(a, 2);
    assert.ok(Math.abs(b! - 10 / 3) < 1e-12);
  });

  it('keeps gaps as gaps without resetting the average', () => {
    const out = emaSmooth([2, null, 4], 0.5);
    assert.strictEqual(out[1], null);
    assert.ok(Math.abs(out[2]! - 10 / 3) < 1e-12);
  });
});
