// Usage, cost and budgets of GRPO, SFT and DPO runs on the embedded engine (real HTTP, the real
// compute backend, a real Python reward for GRPO), with a non-zero price table for the engine's model
// set by the test: every step's cost/step_usd is its usage/* tokens × those prices, training tokens
// are the datums' own (counted by the loop, not the meter), the cumulative figures continue across a
// resume, a run with max_cost_usd stops before the step that would cross it (a resume point saved,
// the budget's words in the result, the event and logs.log), and a resume with a higher budget finishes.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { budgetStopMessage, PREDICT_FROM_LAST } from '../../../src/core/cost/budget';
import type { PriceTable } from '../../../src/core/cost/prices';
import { startDpoRun } from '../../../src/core/dpo/start';
import { startGrpoRun } from '../../../src/core/grpo/start';
import type { RunEvent, RunResultBase } from '../../../src/core/runs/runEvents';
import type { RunStartOptions } from '../../../src/core/runs/startParts';
import { startSftRun } from '../../../src/core/sft/start';
import { ServiceClient } from '../../../src/core/tinker/client';
import { METRIC } from '../../../src/protocol/metricKeys';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { EngineClient, readCheckpointLines, readMetricsLines, startEngineClient, writeReward } from '../grpo/engineFixture';

/** Dollars per million tokens for the engine's model; distinct per category so a category priced at the wrong rate shows. */
const PRICES: PriceTable = {
  taken: '2026-11-28',
  source: 'test: a price table for the engine model',
  models: { [RANDOM_MODEL]: { prefill: 1000, cached_prefill: 250, sample: 3000, train: 2000 } },
  storage_usd_per_gb_month: 0.1,
};
const P = PRICES.models[RANDOM_MODEL]!;

type Row = Record<string, number>;
const n = (row: Row, key: string): number => {
  const v = row[key];
  assert.strictEqual(typeof v, 'number', `step ${row.step}: ${key} missing`);
  return v!;
};
const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} ≠ ${b}`);

/** Every row: cost/step_usd = Σ usage/* × prices; totals are running sums of the rows (across resumes too). */
function checkCostRows(rows: Row[]): void {
  let usd = 0;
  let tokens = 0;
  for (const r of rows) {
    const train = n(r, METRIC.usageTrain);
    const prefill = n(r, METRIC.usagePrefill);
    const cached = n(r, METRIC.usageCachedPrefill);
    const sampled = n(r, METRIC.usageSampled);
    close(n(r, METRIC.costStep), (train * P.train + prefill * P.prefill + cached * P.cached_prefill! + sampled * P.sample) / 1e6, `step ${r.step} cost/step_usd`);
    usd += n(r, METRIC.costStep);
    tokens += train + prefill + cached + sampled;
    close(n(r, METRIC.costTotal), usd, `step ${r.step} cost/total_usd`);
    assert.strictEqual(n(r, METRIC.usageTotal), tokens, `step ${r.step} usage/total_tokens`);
  }
}

/** The budget run's rows show each step started within the budget and the next one would not have (the prediction: the largest of the last steps). */
function checkStopJustified(rows: Row[], budget: number): void {
  const spentBefore = (k: number) => (k === 0 ? 0 : n(rows[k - 1]!, METRIC.costTotal));
  const predicted = (k: number) => Math.max(0, ...rows.slice(Math.max(0, k - PREDICT_FROM_LAST), k).map((r) => n(r, METRIC.costStep)));
  for (let k = 0; k < rows.length; k++) assert.ok(spentBefore(k) + predicted(k) <= budget, `step ${k} started past the budget`);
  const k = rows.length;
  assert.ok(spentBefore(k) + predicted(k) > budget, `step ${k} was within the budget but not run`);
}

interface Kind {
  name: string;
  start: (o: RunStartOptions<never>) => Promise<RunResultBase>;
  spec: Record<string, unknown>;
  steps: number;
  /** the training tokens the loop counted itself, for a row */
  trainTokens(row: Row, previous: Row | undefined): number;
}

describe('usage, cost and budgets of runs on the engine', function () {
  this.timeout(600_000);
  let env: EngineClient | undefined;
  let dir: string;

  before(async () => {
    env = await startEngineClient('tinker-cost-');
    dir = env.dir;
    fs.writeFileSync(path.join(dir, 'chats.jsonl'), Array.from({ length: 24 }, (_, i) => JSON.stringify({ messages: [{ role: 'user', content: `${i % 10}+${(i * 3) % 10}=` }, { role: 'assistant', content: String((i % 10) + ((i * 3) % 10)) }] })).join('\n') + '\n');
    fs.writeFileSync(path.join(dir, 'pairs.jsonl'), Array.from({ length: 24 }, (_, i) => JSON.stringify({ prompt: `${i % 10}+${(i * 7) % 10}=`, chosen: String((i % 10) + ((i * 7) % 10)), rejected: String((i % 10) + ((i * 7) % 10) + 3) })).join('\n') + '\n');
    fs.writeFileSync(path.join(dir, 'train.jsonl'), Array.from({ length: 12 }, (_, i) => JSON.stringify({ question: `${i}+${i}=`, answer: 2 * i })).join('\n') + '\n');
    writeReward(dir);
  });
  after(async () => {
    await env?.close();
  });

  const tokensTrainedDelta = (row: Row, previous: Row | undefined) => n(row, METRIC.tokensTrained) - (previous ? n(previous, METRIC.tokensTrained) : 0);
  const kinds: Kind[] = [
    {
      name: 'sft',
      start: startSftRun as Kind['start'],
      spec: { model: RANDOM_MODEL, renderer: 'chatml', lora_rank: 4, learning_rate: 0.01, batch_size: 4, max_steps: 6, eval_every: 0, save_every: 0, dataset: { path: 'chats.jsonl' } },
      steps: 6,
      trainTokens: tokensTrainedDelta,
    },
    {
      // the DPO loss is a custom loss: a forward, then the forward_backward, both billed as training
      name: 'dpo',
      start: startDpoRun as Kind['start'],
      spec: { model: RANDOM_MODEL, renderer: 'chatml', lora_rank: 4, learning_rate: 0.005, batch_size: 4, max_steps: 6, eval_every: 0, save_every: 0, dataset: { path: 'pairs.jsonl' } },
      steps: 6,
      trainTokens: (row, previous) => 2 * tokensTrainedDelta(row, previous),
    },
    {
      name: 'grpo',
      start: startGrpoRun as Kind['start'],
      spec: { model: RANDOM_MODEL, renderer: 'chatml', lora_rank: 4, learning_rate: 0.001, groups_per_batch: 2, group_size: 2, max_tokens: 4, iterations: 6, save_every: 0, eval_every: 0, dataset: { path: 'train.jsonl' }, reward: { file: 'reward.py', workers: 1 } },
      steps: 6,
      trainTokens: tokensTrainedDelta,
    },
  ];

  for (const kind of kinds) {
    it(`${kind.name}: cost per step = tokens × prices; stops at max_cost_usd with a resume point; resumes with a higher budget to the end`, async () => {
      const engine = env!.engine;
      const connect = () => ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });
      const base = { runsDir: path.join(dir, `runs-${kind.name}`), connect, cacheDir: path.join(dir, 'cache'), python: 'python3' };
      const specFile = path.join(dir, `free.${kind.name}.json`);
      fs.writeFileSync(specFile, JSON.stringify(kind.spec));

      // without a budget: every step's cost from its own usage rows; training tokens are the datums'
      const free = await kind.start({ ...base, specFile, prices: PRICES } as RunStartOptions<never>);
      assert.strictEqual(free.status, 'completed', free.error);
      const rows = readMetricsLines(free.runDir) as unknown as Row[];
      assert.strictEqual(rows.length, kind.steps);
      checkCostRows(rows);
      rows.forEach((r, i) => assert.strictEqual(n(r, METRIC.usageTrain), kind.trainTokens(r, rows[i - 1]), `step ${i}: training tokens`));
      for (const r of rows) assert.ok(n(r, METRIC.costStep) > 0 && n(r, METRIC.usagePrefill) + n(r, METRIC.usageCachedPrefill) > 0 === (kind.name !== 'sft'), `step ${r.step}: ${JSON.stringify(r)}`);
      if (kind.name === 'grpo') for (const r of rows) assert.ok(n(r, METRIC.usageSampled) > 0, 'GRPO samples');
      const cfg = JSON.parse(fs.readFileSync(path.join(free.runDir, 'config.json'), 'utf8')) as Record<string, unknown>;
      assert.deepStrictEqual(cfg.prices, PRICES, 'the price table in force is recorded');

      // with a budget that the full run would cross: it stops before the step that would cross it
      const budget = n(rows[Math.floor(kind.steps / 2)]!, METRIC.costTotal);
      const budgetFile = path.join(dir, `budget.${kind.name}.json`);
      fs.writeFileSync(budgetFile, JSON.stringify({ ...kind.spec, max_cost_usd: budget }));
      const events: RunEvent[] = [];
      const stopped = await kind.start({ ...base, specFile: budgetFile, prices: PRICES, onEvent: (e: RunEvent) => events.push(e) } as RunStartOptions<never>);
      assert.strictEqual(stopped.status, 'cancelled', stopped.error);
      const done = readMetricsLines(stopped.runDir) as unknown as Row[];
      assert.ok(done.length >= 1 && done.length < kind.steps, `${done.length} steps run`);
      checkCostRows(done);
      checkStopJustified(done, budget);
      const spent = done[done.length - 1]!;
      const message = budgetStopMessage('cost', { usd: n(spent, METRIC.costTotal), tokens: n(spent, METRIC.usageTotal) }, { max_cost_usd: budget });
      assert.strictEqual(stopped.budgetStop, message);
      const finished = events.find((e) => e.type === 'finished');
      assert.ok(finished?.type === 'finished' && finished.budgetStop === message, JSON.stringify(finished));
      assert.ok(events.some((e) => e.type === 'warning' && e.message === message));
      assert.ok(fs.readFileSync(path.join(stopped.runDir, 'logs.log'), 'utf8').includes(message));
      const resumePoint = readCheckpointLines(stopped.runDir).at(-1)!;
      assert.strictEqual(resumePoint.batch, done.length, 'a resume point at the next step');
      assert.ok(resumePoint.state_path);

      // the same budget again: not one more step
      const again = await kind.start({ ...base, resumeDir: stopped.runDir } as RunStartOptions<never>);
      assert.strictEqual(again.status, 'cancelled');
      assert.strictEqual(again.iterationsRun, 0);
      assert.strictEqual(readMetricsLines(stopped.runDir).length, done.length);

      // a higher budget: on to the end, the totals continuing across the resume (prices from config.json)
      fs.writeFileSync(budgetFile, JSON.stringify({ ...kind.spec, max_cost_usd: budget * 100 }));
      const resumed = await kind.start({ ...base, specFile: budgetFile, resumeDir: stopped.runDir } as RunStartOptions<never>);
      assert.strictEqual(resumed.status, 'completed', resumed.error);
      assert.strictEqual(resumed.budgetStop, undefined);
      const all = readMetricsLines(stopped.runDir) as unknown as Row[];
      assert.deepStrictEqual(all.map((r) => r.step), Array.from({ length: kind.steps }, (_, i) => i));
      checkCostRows(all);
      all.forEach((r, i) => assert.strictEqual(n(r, METRIC.usageTrain), kind.trainTokens(r, all[i - 1]), `step ${i}: training tokens`));
    });
  }
});
