// arith-chat's accuracy table in docs/engine.md: it is what scripts/eval-arith-chat.mjs prints from
// its record (docs/arith-chat-eval.json: every episode's outcome), with the eval code's bootstrap
// intervals; the record is of the shipped weights, at least 400 episodes per set in both decoding
// modes, and a prefix of it re-sampled on the real engine gives the same outcomes (not re-running the
// whole 5,000-odd episodes).
import * as assert from 'assert';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ArithEpisode } from '../../../src/core/data/arithChat';
import {
  ARITH_EVAL_SETS,
  ArithEvalRecord,
  arithEvalAccuracies,
  arithEvalEpisodes,
  arithEvalFigures,
  arithEvalTable,
  evaluateArithChat,
  formatArithFigure,
  type ArithEvalOutcomes,
  type ArithEvalSet,
} from '../../../src/core/evals/arithChatEval';
import { bootstrapMean, DEFAULT_BOOTSTRAP, EVAL_STATS_SEED } from '../../../src/core/evals/stats';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { getRenderer } from '../../../src/core/render/registry';
import { initCompute } from '../../../src/engine/compute';
import { LocalBackend } from '../../../src/engine/model';
import { ARITH_CHAT_MODEL, CHAT_GPT, CHAT_WEIGHTS_FILE } from '../../../src/engine/model/models';
import { engineSampleTurn } from '../../../src/engine/model/arithChatTurns';

const root = path.join(__dirname, '../../../..');
const weightsDir = path.join(root, 'src/engine/weights');
const readRecord = () => ArithEvalRecord.parse(JSON.parse(fs.readFileSync(path.join(root, 'docs/arith-chat-eval.json'), 'utf8')));

/** every episode count of one decoding mode's outcomes */
function counts(o: ArithEvalOutcomes): Record<ArithEvalSet, number> {
  return {
    single: o.right.single?.length ?? 0,
    single_system: o.right.single_system?.length ?? 0,
    feedback: o.right.feedback?.length ?? 0,
    chain2: o.chains.chain2?.allRight.length ?? 0,
    chain3: o.chains.chain3?.allRight.length ?? 0,
    tool3: o.tools.tool3?.right.length ?? 0,
    tool4: o.tools.tool4?.right.length ?? 0,
  };
}

describe('arith-chat accuracy table (docs/engine.md ↔ scripts/eval-arith-chat.mjs)', function () {
  this.timeout(300_000);

  it('the record is of the shipped weights, ≥ 400 episodes of every set in both modes', () => {
    const r = readRecord();
    const sha = crypto.createHash('sha256').update(fs.readFileSync(path.join(weightsDir, CHAT_WEIGHTS_FILE))).digest('hex');
    assert.strictEqual(r.weights_sha256, sha, 'docs/arith-chat-eval.json is of other weights: re-run scripts/eval-arith-chat.mjs and update docs/engine.md');
    assert.strictEqual(r.model, ARITH_CHAT_MODEL);
    assert.ok(r.episodes_per_set >= 400, `${r.episodes_per_set} episodes per set`);
    for (const mode of [r.temperature_1, r.greedy]) {
      const c = counts(mode);
      for (const s of ARITH_EVAL_SETS) assert.strictEqual(c[s], r.episodes_per_set, `${s}: ${c[s]} episodes`);
      assert.strictEqual(mode.chains.chain2!.followUps, 1);
      assert.strictEqual(mode.chains.chain3!.followUps, 2);
    }
  });

  it("docs/engine.md holds the script's table of the record, and the record's command and size", () => {
    const r = readRecord();
    const doc = fs.readFileSync(path.join(root, 'docs/engine.md'), 'utf8');
    const table = arithEvalTable(arithEvalFigures(r.temperature_1), arithEvalFigures(r.greedy));
    assert.ok(doc.includes(table), `docs/engine.md lacks the table of docs/arith-chat-eval.json:\n${table}`);
    assert.ok(doc.includes(r.command), `docs/engine.md lacks the command "${r.command}"`);
    assert.ok(doc.includes(`seed ${r.episode_seed}`), `docs/engine.md lacks "seed ${r.episode_seed}"`);
  });

  it("the figures' intervals are the eval code's bootstrap over episodes (B = 2,000, seed 1)", () => {
    const r = readRecord();
    const figs = arithEvalFigures(r.greedy);
    const acc = arithEvalAccuracies(r.greedy);
    // a set with one figure: exactly bootstrapMean of its episodes, as an eval's reward interval
    const single = figs.find((f) => f.key === 'single')!;
    assert.deepStrictEqual(single.estimate, bootstrapMean(r.greedy.right.single!, { resamples: DEFAULT_BOOTSTRAP, seed: EVAL_STATS_SEED }));
    for (const f of figs) {
      if (!f.points) assert.ok(Math.abs(f.estimate.value - acc[f.key]!) < 1e-12, `${f.key}: ${f.estimate.value} vs ${acc[f.key]}`);
      assert.ok(f.estimate.lo! <= f.estimate.value && f.estimate.value <= f.estimate.hi!, `${f.key}: ${formatArithFigure(f)}`);
    }
    // chain3's two follow-ups per episode are resampled with their episode
    const chain3 = figs.find((f) => f.key === 'chain3')!;
    assert.strictEqual(chain3.turns, 2 * r.episodes_per_set);
    assert.match(formatArithFigure(chain3), /^\d+\.\d % \[\d+\.\d, \d+\.\d\]$/);
  });

  it('a prefix of every set, re-sampled on the engine, gives the recorded outcomes', async () => {
    const r = readRecord();
    await initCompute({ threads: 1, log: () => undefined });
    const b = new LocalBackend({ weightsDir });
    await b.createSampler('s', { baseModel: ARITH_CHAT_MODEL });
    const renderer = getRenderer('chatml', new ByteTokenizer());
    const all = arithEvalEpisodes(r.episodes_per_set, r.episode_seed);
    const k = 12;
    const run = (sets: Record<ArithEvalSet, ArithEpisode[]>, temperature: number) => evaluateArithChat(renderer, sets, engineSampleTurn(b, 's', temperature), CHAT_GPT.ctx);
    try {
      // greedy ignores the request's seed: the first k episodes of every set
      const prefix = Object.fromEntries(ARITH_EVAL_SETS.map((s) => [s, all[s].slice(0, k)])) as Record<ArithEvalSet, ArithEpisode[]>;
      const g = await run(prefix, 0);
      const head = (xs: number[] | undefined) => xs!.slice(0, k);
      for (const f of ['single', 'single_system', 'feedback'] as const) assert.deepStrictEqual(g.right[f], head(r.greedy.right[f]), f);
      for (const f of ['chain2', 'chain3'] as const) {
        assert.deepStrictEqual(g.chains[f]!.followUpsRight, head(r.greedy.chains[f]!.followUpsRight), f);
        assert.deepStrictEqual(g.chains[f]!.allRight, head(r.greedy.chains[f]!.allRight), f);
      }
      for (const f of ['tool3', 'tool4'] as const) {
        for (const c of ['right', 'parsed', 'direct'] as const) assert.deepStrictEqual(g.tools[f]![c], head(r.greedy.tools[f]![c]), `${f} ${c}`);
      }
      // temperature 1: the single set comes first, so its episode i is sampled with seed 1000 + i at any n
      const none = Object.fromEntries(ARITH_EVAL_SETS.map((s) => [s, []])) as unknown as Record<ArithEvalSet, ArithEpisode[]>;
      const t = await run({ ...none, single: all.single.slice(0, 4 * k) }, 1);
      assert.deepStrictEqual(t.right.single, r.temperature_1.right.single!.slice(0, 4 * k));
    } finally {
      await b.close();
    }
  });
});
