// The table the CLI prints when a run ends: holdout metrics at the first and the last evaluation
// (read back from metrics.jsonl, merged per step), and the training reward at the first and last step.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MetricsRecord, mergeMetrics, parseRecords } from '../core/runs/runDirectory';
import { METRIC } from '../core/runs/metricKeys';

const ROWS: Array<[string, string]> = [
  ['holdout reward', METRIC.testReward],
  ['holdout correct (reward ≥ 0.5)', METRIC.testCorrect],
  ['holdout format (ended on stop)', METRIC.testFormat],
];

const TRAIN_REWARD_LABEL = `train reward (${METRIC.reward})`;

const num = (v: unknown) => (typeof v === 'number' && !Number.isNaN(v) ? v.toFixed(3) : '-');

export function summaryTable(runDir: string): string {
  const file = path.join(runDir, 'metrics.jsonl');
  if (!fs.existsSync(file)) return 'no metrics were written';
  const lines = mergeMetrics(parseRecords(fs.readFileSync(file, 'utf8'), file, MetricsRecord).records);
  if (lines.length === 0) return 'no metrics were written';
  const evals = lines.filter((l) => typeof l[METRIC.testReward] === 'number');
  const out: string[] = [];
  const w = Math.max(...ROWS.map(([label]) => label.length), TRAIN_REWARD_LABEL.length) + 2;
  if (evals.length > 0) {
    const first = evals[0]!;
    const last = evals[evals.length - 1]!;
    const n = first[METRIC.testEpisodes];
    out.push(`${''.padEnd(w)}${`before (step ${first.step})`.padStart(16)}${`after (step ${last.step})`.padStart(16)}`);
    for (const [label, key] of ROWS) out.push(`${label.padEnd(w)}${num(first[key]).padStart(16)}${num(last[key]).padStart(16)}`);
    out.push(`(${typeof n === 'number' ? n : '?'} holdout problems, one sample each at temperature 1, evaluated before that step's update)`);
  } else out.push('no holdout evaluation ran (eval_every is 0 or there is no holdout)');
  const firstTrain = lines[0]!;
  const lastTrain = lines[lines.length - 1]!;
  out.push(`${TRAIN_REWARD_LABEL.padEnd(w)}${`${num(firstTrain[METRIC.reward])} (step ${firstTrain.step})`.padStart(16)}${`${num(lastTrain[METRIC.reward])} (step ${lastTrain.step})`.padStart(16)}`);
  return out.join('\n');
}
