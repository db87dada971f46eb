// An eval's usage, cost and budget on the embedded engine (real HTTP, the real compute backend, the
// real Python grader), priced by a table set in the test: each target's usage is what its sampling
// client counted (its sampled tokens equal the recorded completions'), its cost is tokens × prices,
// a budget stops the eval before it would be crossed (samples kept, the message said), and a re-run
// with a higher budget samples only what is missing and finishes, the spending counted across both.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { runEval } from '../../../src/core/evals/runEval';
import { readEvalResults, readTargetSamples } from '../../../src/core/evals/results';
import type { PriceTable } from '../../../src/core/cost/prices';
import { startCountingEngine, type CountingEngine } from './engineFixture';

const EXAMPLE = path.resolve(__dirname, '../../../../examples/arithmetic');
const MODEL = 'tinker-studio/arith-gpt';
/** $1,000 per million prefill tokens, $2,000 per million sampled: a sample costs a few cents */
const PRICES: PriceTable = { taken: '2026-11-01', source: 'test table', storage_usd_per_gb_month: 0, models: { [MODEL]: { prefill: 1000, sample: 2000, train: 0 } } };

describe('eval budget: usage and cost per target, a stop before the budget, a resume to the end', function () {
  this.timeout(120_000);
  let engine: CountingEngine;
  before(async () => {
    engine = await startCountingEngine('tinker-eval-budget-');
  });
  after(async () => {
    await engine?.close();
  });

  function specFile(extra: Record<string, unknown>): string {
    const d = path.join(engine.dir, 'budget');
    fs.mkdirSync(d, { recursive: true });
    for (const f of ['holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(EXAMPLE, f), path.join(d, f));
    const file = path.join(d, 'budget.eval.json');
    fs.writeFileSync(file, JSON.stringify({ dataset: { path: 'holdout.jsonl', max_problems: 10 }, grader: { file: 'reward.py' }, n: 2, max_tokens: 6, seed: 3, concurrency: 2, targets: [MODEL], ...extra }));
    return file;
  }

  const priced = (u: { prefill: number; cached_prefill: number; sampled: number; train: number }) => (u.prefill * 1000 + u.cached_prefill * 1000 + u.sampled * 2000) / 1e6;

  it('stops before max_cost_usd with the samples kept, then a higher budget resumes to the end', async () => {
    const file = specFile({ max_cost_usd: 0.3 });
    const out = path.join(path.dirname(file), 'evals', 'budget');
    const lines: string[] = [];
    const first = await runEval({ specFile: file, connect: () => engine.connect(), cacheDir: engine.cacheDir(), prices: PRICES, log: (l) => lines.push(l) });
    const t = first.targets[0]!;
    const recorded = readTargetSamples(out, t.id);
    assert.ok(recorded.length > 0 && recorded.length < 20, `some of the 20 samples, not all: ${recorded.length}`);
    assert.strictEqual(first.complete, false);
    // what the client counted: the sampled tokens are the recorded completions' tokens
    assert.strictEqual(t.usage!.sampled, recorded.reduce((a, r) => a + r.completion_tokens.length, 0));
    assert.ok(t.usage!.prefill + t.usage!.cached_prefill > 0);
    assert.strictEqual(t.usage!.train, 0);
    assert.ok(Math.abs(t.cost_usd! - priced(t.usage!)) < 1e-12, `${t.cost_usd} = tokens × prices`);
    assert.ok(t.cost_usd! <= 0.3, `never over the budget: ${t.cost_usd}`);
    assert.match(first.budget_stop ?? '', /^stopped at \$0\.\d\d of \$0\.30 \(estimate\); resume with a higher budget to continue$/);
    assert.ok(lines.some((l) => l === `budget: ${first.budget_stop}`), lines.join('\n'));
    assert.deepStrictEqual(readEvalResults(out).summary, first, 'the summary on disk says the same');

    // a higher budget: only the missing samples are requested, and the spending adds up over both sessions
    const served = engine.served.samples;
    specFile({ max_cost_usd: 5 });
    const second = await runEval({ specFile: file, connect: () => engine.connect(), cacheDir: engine.cacheDir(), prices: PRICES });
    assert.strictEqual(engine.served.samples - served, 20 - recorded.length);
    assert.strictEqual(second.complete, true);
    assert.strictEqual(second.budget_stop, undefined);
    const t2 = second.targets[0]!;
    const all = readTargetSamples(out, t2.id);
    assert.strictEqual(all.length, 20);
    assert.strictEqual(t2.usage!.sampled, all.reduce((a, r) => a + r.completion_tokens.length, 0));
    assert.ok(t2.usage!.prefill > t.usage!.prefill);
    assert.ok(Math.abs(t2.cost_usd! - priced(t2.usage!)) < 1e-12);
  });

  it('max_tokens_total: stops before the tokens would pass it', async () => {
    const file = specFile({ name: 'tokens', max_tokens_total: 150 });
    const summary = await runEval({ specFile: file, connect: () => engine.connect(), cacheDir: engine.cacheDir() });
    const u = summary.targets[0]!.usage!;
    const tokens = u.prefill + u.cached_prefill + u.sampled + u.train;
    assert.ok(tokens > 0 && tokens <= 150, `${tokens}`);
    assert.strictEqual(summary.complete, false);
    assert.match(summary.budget_stop ?? '', /^stopped at \d+ of 150 tokens; resume with a higher budget to continue$/);
    assert.strictEqual(summary.targets[0]!.cost_usd, 0, 'no price table given: the shipped one, where the engine is free');
  });
});
