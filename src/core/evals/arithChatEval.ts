// arith-chat's holdout evaluation: each format sampled turn by turn on holdout episodes (a chain's
// follow-up graded against the model's own previous answer, a feedback episode's wrong first answer
// scripted, a tool call executed and the final answer graded). scripts/pretrain-arith-chat.mjs runs it
// during pretraining and scripts/eval-arith-chat.mjs runs it on the shipped weights for docs/engine.md's
// table, whose 95 % intervals are the eval code's (evals/stats.ts: bootstrap over episodes).
import * as z from 'zod';
import type { ChatMessage } from '../../protocol/chatMessage';
import { bootstrapMeans, DEFAULT_BOOTSTRAP, EVAL_STATS_SEED, type Interval } from './stats';
import type { Renderer } from '../render/types';
import { ARITH_PHRASES, CALCULATOR_TOOL, arithEpisode, type ArithEpisode } from '../data/arithChat';
import { mulberry32 } from '../data/prng';

/** The evaluation sets: the six formats, tool use split by the sums' digits. */
export const ARITH_EVAL_SETS = ['single', 'single_system', 'chain2', 'chain3', 'feedback', 'tool3', 'tool4'] as const;
export type ArithEvalSet = (typeof ARITH_EVAL_SETS)[number];

/**
 * `n` holdout episodes per set, drawn in the order of ARITH_EVAL_SETS from mulberry32(9000 + seed)
 * (the pretraining script's draw for its --seed).
 */
export function arithEvalEpisodes(n: number, seed: number): Record<ArithEvalSet, ArithEpisode[]> {
  const rand = mulberry32(9_000 + seed);
  const draw = (f: Parameters<typeof arithEpisode>[0], toolDigits?: 3 | 4) =>
    Array.from({ length: n }, () => arithEpisode(f, rand, true, toolDigits ? { toolDigits } : {}));
  return {
    single: draw('single'),
    single_system: draw('single_system'),
    chain2: draw('chain2'),
    chain3: draw('chain3'),
    feedback: draw('feedback'),
    tool3: draw('tool', 3),
    tool4: draw('tool', 4),
  };
}

/** One sampled assistant turn: the prompt's tokens → the sampled tokens. `seed` is the request's. */
export type SampleTurn = (prompt: number[], maxTokens: number, seed: number) => Promise<number[]>;

/** Each episode's outcome, per set (0/1, or for chains the count of right follow-ups). */
export interface ArithEvalOutcomes {
  /** single, single_system, feedback: the graded turn right */
  right: Partial<Record<'single' | 'single_system' | 'feedback', number[]>>;
  /** chains: right follow-ups per episode (of 1 or 2), and all turns right */
  chains: Partial<Record<'chain2' | 'chain3', { followUpsRight: number[]; followUps: number; allRight: number[] }>>;
  /** tool use: the final answer right (0 when the call did not parse), the call parsed, the same sum answered directly */
  tools: Partial<Record<'tool3' | 'tool4', { right: number[]; parsed: number[]; direct: number[] }>>;
}

/**
 * Samples every set with `sample`, each request its own seed 1000, 1001, … in a fixed order (the sets in
 * order; all episodes of one turn in one batch), so a run is reproducible. A prompt that leaves no room
 * for `maxTokens` in `ctx` positions is answered with nothing (and takes no seed).
 */
export async function evaluateArithChat(
  renderer: Renderer,
  sets: Record<ArithEvalSet, ArithEpisode[]>,
  sample: SampleTurn,
  ctx: number,
): Promise<ArithEvalOutcomes> {
  let seed = 0;
  const turn = (convs: ChatMessage[][], maxTokens = 8): Promise<ChatMessage[]> =>
    Promise.all(
      convs.map(async (messages) => {
        const prompt = renderer.buildGenerationPrompt(messages);
        if (prompt.length + maxTokens > ctx) return { role: 'assistant', content: '' } as ChatMessage;
        const tokens = await sample(prompt, maxTokens, 1000 + seed++);
        return renderer.parseResponse(tokens).message as ChatMessage;
      }),
    );
  const text = (m: ChatMessage) => (typeof m.content === 'string' ? m.content : '');
  const answer = (m: ChatMessage) => (/^\d+$/.test(text(m).trim()) && !m.tool_calls ? Number(text(m).trim()) : undefined);
  const out: ArithEvalOutcomes = { right: {}, chains: {}, tools: {} };
  // single-turn formats and feedback: the last assistant turn, given everything before it
  for (const f of ['single', 'single_system', 'feedback'] as const) {
    const eps = sets[f];
    const got = await turn(eps.map((e) => e.messages.slice(0, -1)));
    out.right[f] = got.map((m, i) => (answer(m) === Number(eps[i]!.messages.at(-1)!.content) ? 1 : 0));
  }
  // chains: every follow-up builds on the model's own previous answer; graded per follow-up turn
  for (const f of ['chain2', 'chain3'] as const) {
    const eps = sets[f];
    const turns = f === 'chain2' ? 2 : 3;
    const convs = eps.map((e) => [e.messages[0]!]);
    const followUpsRight = eps.map(() => 0);
    const allRight = eps.map(() => 1);
    const totals: Array<number | undefined> = eps.map(() => undefined);
    for (let t = 0; t < turns; t++) {
      const got = await turn(convs);
      got.forEach((m, i) => {
        const a = answer(m);
        const [x, y] = t === 0 ? eps[i]!.sums[0]! : [totals[i], Number(/\d+/.exec(text(eps[i]!.messages[2 * t]!))![0])];
        const right = x !== undefined && a === x + y;
        if (t > 0 && right) followUpsRight[i]!++;
        if (!right) allRight[i] = 0;
        totals[i] = a;
        convs[i]!.push({ role: 'assistant', content: text(m) });
        if (t + 1 < turns) convs[i]!.push(eps[i]!.messages[2 * (t + 1)]!);
      });
    }
    out.chains[f] = { followUpsRight, followUps: turns - 1, allRight };
  }
  // tool use: the model's call is executed (a + b); graded on the final answer; direct = no tools
  for (const f of ['tool3', 'tool4'] as const) {
    const eps = sets[f];
    const calls = await turn(eps.map((e) => e.messages.slice(0, 2)), 96);
    const parsed = eps.map(() => 0);
    const convs: ChatMessage[][] = [];
    const idx: number[] = [];
    calls.forEach((m, i) => {
      const c = m.tool_calls?.length === 1 ? m.tool_calls[0] : undefined;
      let args: { a?: unknown; b?: unknown } | undefined;
      try {
        args = c && c.function.name === CALCULATOR_TOOL.name ? (JSON.parse(c.function.arguments) as { a?: unknown; b?: unknown }) : undefined;
      } catch {
        args = undefined;
      }
      if (!args || !Number.isInteger(args.a) || !Number.isInteger(args.b)) return;
      parsed[i] = 1;
      const sum = (args.a as number) + (args.b as number);
      convs.push([...eps[i]!.messages.slice(0, 2), m, { role: 'tool', name: CALCULATOR_TOOL.name, content: String(sum) }]);
      idx.push(i);
    });
    const finals = await turn(convs);
    const right = eps.map(() => 0);
    const sumOf = (e: ArithEpisode) => e.sums[0]![0] + e.sums[0]![1];
    finals.forEach((m, j) => {
      if (answer(m) === sumOf(eps[idx[j]!]!)) right[idx[j]!] = 1;
    });
    const direct = await turn(eps.map((e) => [{ role: 'user', content: ARITH_PHRASES.question(...e.sums[0]!) }]));
    out.tools[f] = { right, parsed, direct: direct.map((m, i) => (answer(m) === sumOf(eps[i]!) ? 1 : 0)) };
  }
  return out;
}

const bits = z.array(z.union([z.literal(0), z.literal(1)]));
const Outcomes = z
  .object({
    right: z.object({ single: bits, single_system: bits, feedback: bits }).partial().strict(),
    chains: z
      .object({
        chain2: z.object({ followUpsRight: z.array(z.number().int().min(0)), followUps: z.number().int().positive(), allRight: bits }).strict(),
        chain3: z.object({ followUpsRight: z.array(z.number().int().min(0)), followUps: z.number().int().positive(), allRight: bits }).strict(),
      })
      .partial()
      .strict(),
    tools: z
      .object({ tool3: z.object({ right: bits, parsed: bits, direct: bits }).strict(), tool4: z.object({ right: bits, parsed: bits, direct: bits }).strict() })
      .partial()
      .strict(),
  })
  .strict();
export const ARITH_EVAL_RECORD_VERSION = 1;
/** What scripts/eval-arith-chat.mjs writes (docs/arith-chat-eval.json): the run and every episode's outcome. */
export const ArithEvalRecord = z
  .object({
    version: z.literal(ARITH_EVAL_RECORD_VERSION),
    model: z.string(),
    weights_sha256: z.string().regex(/^[0-9a-f]{64}$/),
    command: z.string(),
    episodes_per_set: z.number().int().positive(),
    episode_seed: z.number().int(),
    threads: z.number().int().positive(),
    wall_seconds: z.number().nonnegative(),
    temperature_1: Outcomes,
    greedy: Outcomes,
  })
  .strict();
export type ArithEvalRecord = z.infer<typeof ArithEvalRecord>;

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** The accuracies as the pretraining script logs and records them (the weights file's holdoutAccuracy…). */
export function arithEvalAccuracies(o: ArithEvalOutcomes): Record<string, number> {
  const r: Record<string, number> = {};
  for (const [f, xs] of Object.entries(o.right)) r[f] = sum(xs) / xs.length;
  for (const [f, c] of Object.entries(o.chains)) {
    r[f] = sum(c.followUpsRight) / (c.followUps * c.followUpsRight.length);
    r[`${f}_all_turns`] = sum(c.allRight) / c.allRight.length;
  }
  for (const [f, t] of Object.entries(o.tools)) {
    r[f] = sum(t.right) / t.right.length;
    r[`${f}_parse_rate`] = sum(t.parsed) / t.parsed.length;
    r[`${f}_direct`] = sum(t.direct) / t.direct.length;
  }
  return r;
}

/** One figure of the table: what it measures, over how many episodes, with its 95 % interval. */
export interface ArithFigure {
  key: string;
  label: string;
  /** episodes (the unit the bootstrap resamples) */
  n: number;
  /** graded turns, when more than one per episode (chain3's follow-ups) */
  turns?: number;
  estimate: Interval;
  /** a difference in points (the tool gain), not an accuracy */
  points?: boolean;
}

/**
 * The table's figures with their 95 % intervals, exactly as the eval code computes them
 * (evals/stats.ts bootstrapMeans: the episodes resampled with replacement B times, seeded, one
 * resampling per set for all its figures; the 2.5th and 97.5th percentiles). A chain's follow-up
 * accuracy is a mean over episodes of each episode's share of right follow-ups, so its two follow-ups
 * are resampled together.
 */
export function arithEvalFigures(o: ArithEvalOutcomes, opts: { resamples?: number; seed?: number } = {}): ArithFigure[] {
  const b = { resamples: opts.resamples ?? DEFAULT_BOOTSTRAP, seed: opts.seed ?? EVAL_STATS_SEED };
  const figs: ArithFigure[] = [];
  /** one set's figures, from one resampling of its episodes */
  const add = (columns: Array<{ key: string; label: string; values: number[]; points?: boolean; turns?: number }>) => {
    const est = bootstrapMeans(
      columns.map((c) => c.values),
      b,
    );
    columns.forEach((c, j) => figs.push({ key: c.key, label: c.label, n: c.values.length, estimate: est[j]!, ...(c.points ? { points: true } : {}), ...(c.turns ? { turns: c.turns } : {}) }));
  };
  for (const f of ['single', 'single_system'] as const) {
    const xs = o.right[f];
    if (xs) add([{ key: f, label: f, values: xs }]);
  }
  for (const f of ['chain2', 'chain3'] as const) {
    const c = o.chains[f];
    if (!c) continue;
    const what = f === 'chain2' ? "the follow-up, on the model's own first answer" : "the two follow-ups, each on the model's own previous answer";
    add([
      { key: f, label: `${f}: ${what}`, values: c.followUpsRight.map((k) => k / c.followUps), ...(c.followUps > 1 ? { turns: c.followUps * c.followUpsRight.length } : {}) },
      { key: `${f}_all_turns`, label: `${f}: all turns right`, values: c.allRight },
    ]);
  }
  const fb = o.right.feedback;
  if (fb) add([{ key: 'feedback', label: 'feedback (the second attempt)', values: fb }]);
  for (const f of ['tool3', 'tool4'] as const) {
    const t = o.tools[f];
    if (!t) continue;
    const digits = f === 'tool3' ? 'three' : 'four';
    add([
      { key: f, label: `tool, ${digits}-digit sums: the final answer`, values: t.right },
      { key: `${f}_parse_rate`, label: `tool, ${digits}-digit sums: the call parses`, values: t.parsed },
      ...(f === 'tool3'
        ? [
            { key: `${f}_direct`, label: 'the same three-digit sums answered directly (no tool)', values: t.direct },
            { key: `${f}_gain`, label: 'tool gain on three-digit sums (final answer − direct, points)', values: t.right.map((x, i) => x - t.direct[i]!), points: true },
          ]
        : []),
    ]);
  }
  return figs;
}

const one = (x: number | undefined) => (x === undefined ? '—' : (100 * x).toFixed(1));

/** "67.5 % [62.8, 72.0]"; a difference in points: "+43.8 [38.9, 48.6] points" */
export function formatArithFigure(f: ArithFigure): string {
  const e = f.estimate;
  const ci = e.lo !== undefined && e.hi !== undefined ? ` [${one(e.lo)}, ${one(e.hi)}]` : '';
  if (f.points) return `${e.value >= 0 ? '+' : ''}${one(e.value)}${ci} points`;
  return `${one(e.value)} %${ci}`;
}

/**
 * docs/engine.md's table: one row per figure, n (episodes; graded turns too where an episode has
 * several), the figure at temperature 1 and greedy with its 95 % interval.
 */
export function arithEvalTable(t1: ArithFigure[], greedy: ArithFigure[]): string {
  const rows = ['| figure (holdout episodes) | n | temperature 1 [95 % interval] | greedy [95 % interval] |', '|---|---|---|---|'];
  for (const f of t1) {
    const g = greedy.find((x) => x.key === f.key);
    if (!g || g.n !== f.n) throw new Error(`the greedy evaluation lacks ${f.key} over ${f.n} episodes`);
    const n = f.turns ? `${f.n} (${f.turns} follow-ups)` : String(f.n);
    rows.push(`| ${f.label} | ${n} | ${formatArithFigure(f)} | ${formatArithFigure(g)} |`);
  }
  return rows.join('\n');
}
