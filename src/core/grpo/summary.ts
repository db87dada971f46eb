// The table the CLI prints when a run ends: holdout metrics at the first and the last evaluation
// (read back from metrics.jsonl, merged per step), each inline evaluator's first and last figures,
// and the training signal at the first and last step: the reward, and for distillation the KL to
// the teacher (a distillation run without a reward has no reward to show).
import * as fs from 'node:fs';
import { readMetricsRowsSync } from '../runs/runDirectory';
import { parseRunConfig, runConfigFile } from '../runs/runConfig';
import { inlineEvalsIn, INLINE_EVAL_KEY, METRIC } from '../../protocol/metricKeys';

const ROWS: Array<[string, string]> = [
  ['holdout reward', METRIC.testReward],
  ['holdout correct (reward ≥ 0.5)', METRIC.testCorrect],
  ['holdout format (ended on stop)', METRIC.testFormat],
];

const TRAIN_REWARD_LABEL = `train reward (${METRIC.reward})`;

const num = (v: unknown) => (typeof v === 'number' && !Number.isNaN(v) ? v.toFixed(3) : '-');

/** rows of cells, left column left-aligned, the others right-aligned, each column as wide as its widest cell */
function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : `  ${cell.padStart(widths[c]!)}`)).join('').trimEnd());
}

const mean = (xs: unknown[]) => {
  const v = xs.filter((x): x is number => typeof x === 'number' && !Number.isNaN(x));
  return v.length > 0 ? v.reduce((a, b) => a + b, 0) / v.length : undefined;
};

/** Whether the run was scored by a reward (or an environment): its config.json names one; true when unknown. */
function hasReward(runDir: string): boolean {
  try {
    const file = runConfigFile(runDir);
    const c = parseRunConfig(fs.readFileSync(file, 'utf8'), file);
    const configs = Array.isArray(c.dataset_configs) ? (c.dataset_configs as Array<{ reward?: unknown }>) : [];
    return c.reward !== undefined || c.env !== undefined || configs.some((d) => d?.reward !== undefined);
  } catch {
    return true;
  }
}

type Row = Record<string, unknown> & { step: number };

/** A metric's first and last value over the steps that logged it, each with its step; undefined when none did. */
function firstLast(lines: readonly Row[], label: string, key: string): string[] | undefined {
  const at = lines.filter((l) => typeof l[key] === 'number');
  if (at.length === 0) return undefined;
  const a = at[0]!;
  const b = at[at.length - 1]!;
  return [label, `${num(a[key])} (step ${a.step})`, `${num(b[key])} (step ${b.step})`];
}

export function summaryTable(runDir: string): string {
  const lines = readMetricsRowsSync(runDir);
  if (lines.length === 0) return 'no metrics were written';
  const evals = lines.filter((l) => typeof l[METRIC.testReward] === 'number');
  // one table, so the holdout and the training columns line up; the note goes under the holdout rows
  const rows: string[][] = [];
  let note: string | undefined;
  if (evals.length > 0) {
    const first = evals[0]!;
    const last = evals[evals.length - 1]!;
    const n = first[METRIC.testEpisodes];
    rows.push(['', `before (step ${first.step})`, `after (step ${last.step})`], ...ROWS.map(([label, key]) => [label, num(first[key]), num(last[key])]));
    note = `(${typeof n === 'number' ? n : '?'} holdout problems, one sample each at temperature 1, evaluated before that step's update)`;
  }
  // the spec's inline evaluators (`evals`): each at its own steps
  const inline = inlineEvalsIn(new Set(lines.flatMap((l) => Object.keys(l))));
  for (const e of inline) {
    const k = e.passAt[e.passAt.length - 1];
    const found =
      e.kind === 'nll'
        ? [firstLast(lines, `${e.name} NLL (inline evaluator)`, INLINE_EVAL_KEY.nll(e.name))]
        : [firstLast(lines, `${e.name} reward (inline evaluator)`, INLINE_EVAL_KEY.reward(e.name)), ...(k !== undefined && k > 1 ? [firstLast(lines, `${e.name} pass@${k}`, INLINE_EVAL_KEY.passAt(e.name, k))] : [])];
    for (const r of found) if (r) rows.push(r);
  }
  if (evals.length === 0 && inline.length === 0) note = 'no holdout evaluation ran (eval_every is 0 or there is no holdout, and the spec has no inline evaluator)';
  const noteAt = evals.length > 0 ? 1 + ROWS.length : 0;
  const firstTrain = lines[0]!;
  const lastTrain = lines[lines.length - 1]!;
  // the trend, less noisy than two single steps
  const k = Math.min(5, Math.floor(lines.length / 2));
  const trend = (key: string) => {
    if (k >= 2) rows.push([`  mean of the first / last ${k} steps`, num(mean(lines.slice(0, k).map((l) => l[key]))), num(mean(lines.slice(-k).map((l) => l[key])))]);
  };
  const distilled = lines.some((l) => typeof l[METRIC.teacherKl] === 'number');
  if (!distilled || hasReward(runDir)) {
    rows.push([TRAIN_REWARD_LABEL, `${num(firstTrain[METRIC.reward])} (step ${firstTrain.step})`, `${num(lastTrain[METRIC.reward])} (step ${lastTrain.step})`]);
    trend(METRIC.reward);
  }
  if (distilled) {
    rows.push(firstLast(lines, `KL to the teacher (${METRIC.teacherKl}, per token)`, METRIC.teacherKl)!);
    trend(METRIC.teacherKl);
  }
  const out = table(rows);
  if (note) out.splice(noteAt, 0, note);
  return out.join('\n');
}
