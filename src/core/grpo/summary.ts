// The table the CLI prints when a run ends: holdout metrics at the first and the last evaluation
// (read back from metrics.jsonl, merged per step), and the training reward at the first and last step.
import { readMetricsRowsSync } from '../runs/runDirectory';
import { METRIC } from '../../protocol/metricKeys';

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

export function summaryTable(runDir: string): string {
  const lines = readMetricsRowsSync(runDir);
  if (lines.length === 0) return 'no metrics were written';
  const evals = lines.filter((l) => typeof l[METRIC.testReward] === 'number');
  // one table, so the holdout and the training columns line up; the note goes under the holdout rows
  const rows: string[][] = [];
  let note: string;
  if (evals.length > 0) {
    const first = evals[0]!;
    const last = evals[evals.length - 1]!;
    const n = first[METRIC.testEpisodes];
    rows.push(['', `before (step ${first.step})`, `after (step ${last.step})`], ...ROWS.map(([label, key]) => [label, num(first[key]), num(last[key])]));
    note = `(${typeof n === 'number' ? n : '?'} holdout problems, one sample each at temperature 1, evaluated before that step's update)`;
  } else note = 'no holdout evaluation ran (eval_every is 0 or there is no holdout)';
  const noteAt = rows.length;
  const firstTrain = lines[0]!;
  const lastTrain = lines[lines.length - 1]!;
  rows.push([TRAIN_REWARD_LABEL, `${num(firstTrain[METRIC.reward])} (step ${firstTrain.step})`, `${num(lastTrain[METRIC.reward])} (step ${lastTrain.step})`]);
  // the trend, less noisy than two single steps
  const k = Math.min(5, Math.floor(lines.length / 2));
  if (k >= 2) rows.push([`  mean of the first / last ${k} steps`, num(mean(lines.slice(0, k).map((l) => l[METRIC.reward]))), num(mean(lines.slice(-k).map((l) => l[METRIC.reward])))]);
  const out = table(rows);
  out.splice(noteAt, 0, note);
  return out.join('\n');
}
