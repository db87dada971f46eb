// The model card's pure parts: each suite metric across a model's versions (only results of the same
// suite version as the card's own newest one, in version order), the MODELS.md entry cut from the
// generated file, the snapshot's offers, and the chart's y range.
import * as assert from 'assert';
import { renderModelsMd } from '../../../src/core/models/markdown';
import type { ModelVersion, Registry, SuiteSnapshot } from '../../../src/core/models/registry';
import { seriesRange } from '../../../src/protocol/modelCardProtocol';
import { cardSnapshot, markdownEntry, metricSeries } from '../../../src/vscode/models/modelCard';

const by = { os_user: 'ada', git_user: 'Ada L.' };

function snap(version: string, value: number): SuiteSnapshot {
  return { suite: { name: 'arith', version, file: 'arith.suite.json' }, checkpoint: 'x', complete: true, at: '2026-01-01T00:00:00Z', entries: [{ name: 'holdout', layer: 'product', metric: 'pass@1', goal: 'maximize', estimate: { value, lo: value - 0.1, hi: value + 0.1 }, n: 40 }] };
}

function version(n: number, status: ModelVersion['status'], results: SuiteSnapshot[], extra: Partial<ModelVersion> = {}): ModelVersion {
  return { id: `arith@v${n}`, name: 'arith', version: n, registered_at: '2026-01-01T00:00:00Z', sampler_path: `tinker://r${n}/sampler_weights/final`, base_model: 'm', recipe: [], data: [], suite_results: results, status, history: [{ status: 'candidate', at: '2026-01-01T00:00:00Z', by }], ...extra };
}

describe('model card', () => {
  const reg: Registry = {
    kind: 'tinker-model-registry',
    version: 1,
    versions: [
      version(3, 'candidate', [snap('aaaaaaaaaaaa', 0.5), snap('bbbbbbbbbbbb', 0.7)]),
      version(1, 'production', [snap('bbbbbbbbbbbb', 0.6)], { expires_at: '2026-12-24T09:00:00Z' }),
      version(2, 'retired', [snap('aaaaaaaaaaaa', 0.4)]),
      { ...version(1, 'candidate', [snap('bbbbbbbbbbbb', 0.9)]), id: 'other@v1', name: 'other' },
    ],
  };

  it('draws each entry over the model’s versions that have a result of the card’s suite version, in version order', () => {
    const { suite, series } = metricSeries(reg, reg.versions[0]!);
    assert.deepStrictEqual(suite, { name: 'arith', version: 'bbbbbbbbbbbb' });
    assert.deepStrictEqual(series.map((s) => s.points.map((p) => [p.id, p.estimate.value, p.current])), [[['arith@v1', 0.6, false], ['arith@v3', 0.7, true]]]);
    assert.deepStrictEqual(metricSeries(reg, version(9, 'candidate', [])).series, []);
  });

  it('cuts the version’s entry out of MODELS.md, up to the next version', () => {
    const md = renderModelsMd(reg);
    const entry = markdownEntry(md, 'arith@v1');
    assert.match(entry, /^### arith@v1 — production\n/);
    assert.ok(!entry.includes('arith@v2 —') && !entry.includes('arith@v3 —'), entry);
    assert.match(entry, /expires/);
    assert.strictEqual(markdownEntry(md, 'arith@v10'), '');
  });

  it('offers what works: Clear TTL where the checkpoint expires, flagged in production; no promote or compare for production itself', () => {
    const prod = cardSnapshot(reg, reg.versions[1]!, { registryFile: '/w/tinker-models.json', markdown: '' });
    assert.deepStrictEqual(prod.expiry, { at: '2026-12-24T09:00:00Z', flagged: true });
    assert.deepStrictEqual(prod.can, { promote: false, retire: true, playground: true, clearTtl: true, compare: false });
    const cand = cardSnapshot(reg, reg.versions[0]!, { registryFile: '/w/tinker-models.json', markdown: '' });
    assert.strictEqual(cand.expiry, undefined);
    assert.deepStrictEqual(cand.can, { promote: true, retire: true, playground: true, clearTtl: false, compare: true });
    assert.strictEqual(cand.history[0]!.by, 'Ada L. (ada)');
  });

  it('the chart’s range holds every interval, padded, and is never empty', () => {
    const r = seriesRange([{ estimate: { value: 0.5, lo: 0.4, hi: 0.6 } }, { estimate: { value: 0.8 } }]);
    assert.ok(r.lo < 0.4 && r.hi > 0.8, JSON.stringify(r));
    const flat = seriesRange([{ estimate: { value: 0 } }]);
    assert.ok(flat.hi > flat.lo);
    assert.deepStrictEqual(seriesRange([]), { lo: 0, hi: 1 });
  });
});
