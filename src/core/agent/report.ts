// What an agent reads after a training step: a few lines of text it can decide from, and the same
// facts as structured content. Built from the run directory (metrics.jsonl, the iteration's samples),
// so a report describes what was written, not what the loop meant to write.
import * as fs from 'node:fs';
import { Finding, diagnoseMetrics } from '../../protocol/doctor';
import { MetricsRecord, readMetricsRowsSync } from '../runs/runDirectory';
import { SampleRecord, parseSamples, samplesFile } from '../runs/sampleRecord';
import { METRIC } from '../../protocol/metricKeys';

export interface StepReport {
  run_dir: string;
  /** iterations [first_step, last_step] were run by this call */
  first_step: number;
  last_step: number;
  /** steps of the whole run so far, and the spec's total */
  steps_done: number;
  steps_total: number;
  reward_mean: number | null;
  /** mean reward of the last (up to) 5 iterations minus that of the 5 before; null before 2 iterations */
  reward_trend: number | null;
  test_reward: number | null;
  groups: { total: number; mixed: number; all_good: number; all_bad: number };
  frac_truncated: number | null;
  kl: number | null;
  /** a distillation run's mean reverse KL to the teacher (teacher_kl) at the last step; absent otherwise */
  teacher_kl?: number;
  entropy: number | null;
  seconds: number;
  reward_errors: string[];
  /** best and worst completion of one mixed group of the last iteration */
  samples: Array<{ which: 'best' | 'worst'; problem_id: string; reward: number; advantage: number; completion: string }>;
  /** the run doctor's findings on the whole run so far (none while the evidence is thin) */
  findings: Finding[];
}

const num = (r: MetricsRecord | undefined, key: string): number | null => {
  const v = r?.[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};

const mean = (xs: readonly number[]): number | null => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);
/** The mean of the last (up to) 5 values minus that of the 5 before; with fewer, last minus first; null under 2. */
function trendOf(xs: readonly number[]): number | null {
  const recent = xs.slice(-5);
  const before = xs.slice(-10, -5);
  if (recent.length > 0 && before.length > 0) return mean(recent)! - mean(before)!;
  return xs.length >= 2 ? xs[xs.length - 1]! - xs[0]! : null;
}

/** Best and worst sample of the first mixed group of iteration `step` (none when it has no mixed group). */
export function mixedGroupSnippets(runDir: string, step: number, maxChars = 240): StepReport['samples'] {
  const file = samplesFile(runDir, step, { kind: 'train' });
  if (!fs.existsSync(file)) return [];
  // the run's own sample-record schema: a line it rejects is no sample to quote
  const { records } = parseSamples(fs.readFileSync(file, 'utf8'), file);
  const byGroup = new Map<number, SampleRecord[]>();
  for (const r of records) byGroup.set(r.group_idx, [...(byGroup.get(r.group_idx) ?? []), r]);
  for (const group of byGroup.values()) {
    const sorted = [...group].sort((a, b) => b.reward - a.reward);
    const best = sorted[0]!;
    const worst = sorted[sorted.length - 1]!;
    if (best.reward === worst.reward) continue;
    const snip = (s: SampleRecord, which: 'best' | 'worst') => ({
      which,
      problem_id: s.problem_id,
      reward: s.reward,
      advantage: s.advantage,
      completion: s.content.length > maxChars ? `${s.content.slice(0, maxChars)}…` : s.content,
    });
    return [snip(best, 'best'), snip(worst, 'worst')];
  }
  return [];
}

/** The report of the iterations [firstStep, lastStep] of a run with `groupsPerBatch` groups per step. */
export function stepReport(o: {
  runDir: string;
  firstStep: number;
  lastStep: number;
  stepsTotal: number;
  groupsPerBatch: number;
  rewardErrors: readonly string[];
}): StepReport {
  const all = readMetricsRowsSync(o.runDir);
  const ran = all.filter((r) => r.step >= o.firstStep && r.step <= o.lastStep);
  const last = ran[ran.length - 1];
  const rewards = all.map((r) => num(r, METRIC.reward)).filter((v): v is number => v !== null);
  const trend = trendOf(rewards);
  const testRewards = ran.map((r) => num(r, METRIC.testReward)).filter((v): v is number => v !== null);
  const g = o.groupsPerBatch;
  const count = (key: string) => Math.round((num(last, key) ?? 0) * g);
  return {
    run_dir: o.runDir,
    first_step: o.firstStep,
    last_step: o.lastStep,
    steps_done: all.length === 0 ? 0 : all[all.length - 1]!.step + 1,
    steps_total: o.stepsTotal,
    reward_mean: mean(ran.map((r) => num(r, METRIC.reward)).filter((v): v is number => v !== null)),
    reward_trend: trend,
    test_reward: testRewards.length > 0 ? testRewards[testRewards.length - 1]! : null,
    groups: { total: g, mixed: count(METRIC.fracMixed), all_good: count(METRIC.fracAllGood), all_bad: count(METRIC.fracAllBad) },
    frac_truncated: num(last, METRIC.fracTruncated),
    kl: num(last, METRIC.klV1),
    ...(num(last, METRIC.teacherKl) !== null ? { teacher_kl: num(last, METRIC.teacherKl)! } : {}),
    entropy: num(last, METRIC.entropy),
    seconds: ran.reduce((s, r) => s + (num(r, METRIC.timeTotal) ?? 0), 0),
    reward_errors: o.rewardErrors.slice(0, 3),
    samples: last ? mixedGroupSnippets(o.runDir, last.step) : [],
    findings: diagnoseMetrics(
      all.map((r) => r.step),
      (key) => all.map((r) => num(r, key)),
    ),
  };
}

const f3 = (v: number | null) => (v === null ? '–' : v.toFixed(3));
const signed = (v: number | null) => (v === null ? '–' : `${v >= 0 ? '+' : ''}${v.toFixed(3)}`);

/** The report as a few lines of text. */
export function stepReportText(r: StepReport): string {
  const steps = r.first_step === r.last_step ? `iteration ${r.last_step}` : `iterations ${r.first_step}–${r.last_step}`;
  const lines = [
    `${steps} done (${r.steps_done}/${r.steps_total}), ${r.seconds.toFixed(1)} s`,
    `reward ${f3(r.reward_mean)} (trend ${signed(r.reward_trend)})${r.test_reward !== null ? `, holdout ${f3(r.test_reward)}` : ''}`,
    `groups: ${r.groups.mixed} mixed, ${r.groups.all_good} all-good (ALL-1), ${r.groups.all_bad} all-bad (ALL-0) of ${r.groups.total}; truncated ${f3(r.frac_truncated)}`,
    `KL ${r.kl === null ? '–' : r.kl.toExponential(2)}, entropy ${f3(r.entropy)}${r.teacher_kl !== undefined ? `, KL to the teacher ${f3(r.teacher_kl)}` : ''}`,
  ];
  if (r.reward_errors.length > 0) lines.push(`reward errors: ${r.reward_errors.join(' | ')}`);
  for (const s of r.samples) lines.push(`${s.which} (${s.problem_id}, reward ${f3(s.reward)}): ${JSON.stringify(s.completion)}`);
  for (const f of r.findings) lines.push(`doctor: ${f.title} — ${f.evidence}; ${f.remedy}`);
  lines.push(`run directory: ${r.run_dir}`);
  return lines.join('\n');
}

export interface SftStepReport {
  run_dir: string;
  first_step: number;
  last_step: number;
  steps_done: number;
  train_mean_nll: number | null;
  /** mean train NLL of the last (up to) 5 steps minus that of the 5 before (negative: learning) */
  train_nll_trend: number | null;
  /** the last validation NLL of the steps run, when one was measured */
  test_nll: number | null;
  learning_rate: number | null;
  seconds: number;
}

/** The report of SFT steps [firstStep, lastStep]. */
export function sftStepReport(o: { runDir: string; firstStep: number; lastStep: number }): SftStepReport {
  const all = readMetricsRowsSync(o.runDir);
  const ran = all.filter((r) => r.step >= o.firstStep && r.step <= o.lastStep);
  const nll = all.map((r) => num(r, METRIC.trainNll)).filter((v): v is number => v !== null);
  const tests = ran.map((r) => num(r, METRIC.testNll)).filter((v): v is number => v !== null);
  return {
    run_dir: o.runDir,
    first_step: o.firstStep,
    last_step: o.lastStep,
    steps_done: all.length === 0 ? 0 : all[all.length - 1]!.step + 1,
    train_mean_nll: mean(ran.map((r) => num(r, METRIC.trainNll)).filter((v): v is number => v !== null)),
    train_nll_trend: trendOf(nll),
    test_nll: tests.length > 0 ? tests[tests.length - 1]! : null,
    learning_rate: num(ran[ran.length - 1], 'learning_rate'),
    seconds: ran.reduce((s, r) => s + (num(r, METRIC.timeTotal) ?? 0), 0),
  };
}

export function sftStepReportText(r: SftStepReport): string {
  const steps = r.first_step === r.last_step ? `step ${r.last_step}` : `steps ${r.first_step}–${r.last_step}`;
  return [
    `${steps} done (${r.steps_done} so far), ${r.seconds.toFixed(1)} s`,
    `train NLL ${f3(r.train_mean_nll)} (trend ${signed(r.train_nll_trend)})${r.test_nll !== null ? `, validation NLL ${f3(r.test_nll)}` : ''}, lr ${r.learning_rate === null ? '–' : r.learning_rate.toExponential(2)}`,
    `run directory: ${r.run_dir}`,
  ].join('\n');
}

export interface DpoStepReport {
  run_dir: string;
  first_step: number;
  last_step: number;
  steps_done: number;
  steps_total: number;
  /** the last step's DPO loss, pair accuracy (share with ρ_chosen > ρ_rejected) and mean implicit reward margin */
  dpo_loss: number | null;
  accuracy: number | null;
  margin: number | null;
  chosen_reward: number | null;
  rejected_reward: number | null;
  /** mean DPO loss of the last (up to) 5 steps minus that of the 5 before (negative: learning) */
  dpo_loss_trend: number | null;
  /** the validation pairs' accuracy, margin and chosen NLL, when measured in the steps run */
  test_accuracy: number | null;
  test_margin: number | null;
  test_nll: number | null;
  learning_rate: number | null;
  seconds: number;
}

/** The report of DPO steps [firstStep, lastStep]. */
export function dpoStepReport(o: { runDir: string; firstStep: number; lastStep: number; stepsTotal: number }): DpoStepReport {
  const all = readMetricsRowsSync(o.runDir);
  const ran = all.filter((r) => r.step >= o.firstStep && r.step <= o.lastStep);
  const last = ran[ran.length - 1];
  const losses = all.map((r) => num(r, 'dpo_loss')).filter((v): v is number => v !== null);
  const lastOf = (key: string) => {
    const xs = ran.map((r) => num(r, key)).filter((v): v is number => v !== null);
    return xs.length > 0 ? xs[xs.length - 1]! : null;
  };
  return {
    run_dir: o.runDir,
    first_step: o.firstStep,
    last_step: o.lastStep,
    steps_done: all.length === 0 ? 0 : all[all.length - 1]!.step + 1,
    steps_total: o.stepsTotal,
    dpo_loss: num(last, 'dpo_loss'),
    accuracy: num(last, 'accuracy'),
    margin: num(last, 'margin'),
    chosen_reward: num(last, 'chosen_reward'),
    rejected_reward: num(last, 'rejected_reward'),
    dpo_loss_trend: trendOf(losses),
    test_accuracy: lastOf('test/accuracy'),
    test_margin: lastOf('test/margin'),
    test_nll: lastOf(METRIC.testNll),
    learning_rate: num(last, 'learning_rate'),
    seconds: ran.reduce((s, r) => s + (num(r, METRIC.timeTotal) ?? 0), 0),
  };
}

export function dpoStepReportText(r: DpoStepReport): string {
  const steps = r.first_step === r.last_step ? `step ${r.last_step}` : `steps ${r.first_step}–${r.last_step}`;
  const lines = [
    `${steps} done (${r.steps_done}/${r.steps_total}), ${r.seconds.toFixed(1)} s`,
    `dpo_loss ${f3(r.dpo_loss)} (trend ${signed(r.dpo_loss_trend)}), pair accuracy ${f3(r.accuracy)}, margin ${signed(r.margin)} (chosen ${signed(r.chosen_reward)}, rejected ${signed(r.rejected_reward)}), lr ${r.learning_rate === null ? '–' : r.learning_rate.toExponential(2)}`,
  ];
  if (r.test_accuracy !== null) lines.push(`validation: accuracy ${f3(r.test_accuracy)}, margin ${signed(r.test_margin)}, chosen NLL ${f3(r.test_nll)}`);
  // the known DPO failure: both rewards falling, the rejected faster, while the chosen completions get less likely
  if (r.chosen_reward !== null && r.chosen_reward < 0 && r.rejected_reward !== null && r.rejected_reward < r.chosen_reward) lines.push('note: the chosen reward is negative too (both completions less likely than under the reference); watch the validation chosen NLL and held-out quality, and lower the learning rate or raise dpo_beta if it climbs');
  lines.push(`run directory: ${r.run_dir}`);
  return lines.join('\n');
}
