// What an agent reads after GRPO iterations: a few lines of text it can decide from, and the same
// facts as structured content. Built from the run directory (metrics.jsonl, the iteration's samples),
// so a report describes what was written, not what the loop meant to write.
import * as fs from 'node:fs';
import { Finding, diagnoseMetrics } from '../../protocol/doctor';
import { SampleRecord, parseSamples, samplesFile } from '../runs/sampleRecord';
import { f3, lastValue, mean, num, readStretch, signed, trendOf } from '../runs/stepFigures';
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
  const { all, ran, last, head, seconds } = readStretch(o);
  const rewards = all.map((r) => num(r, METRIC.reward)).filter((v): v is number => v !== null);
  const g = o.groupsPerBatch;
  const count = (key: string) => Math.round((num(last, key) ?? 0) * g);
  return {
    ...head,
    steps_total: o.stepsTotal,
    reward_mean: mean(ran.map((r) => num(r, METRIC.reward)).filter((v): v is number => v !== null)),
    reward_trend: trendOf(rewards),
    test_reward: lastValue(ran, METRIC.testReward),
    groups: { total: g, mixed: count(METRIC.fracMixed), all_good: count(METRIC.fracAllGood), all_bad: count(METRIC.fracAllBad) },
    frac_truncated: num(last, METRIC.fracTruncated),
    kl: num(last, METRIC.klV1),
    ...(num(last, METRIC.teacherKl) !== null ? { teacher_kl: num(last, METRIC.teacherKl)! } : {}),
    entropy: num(last, METRIC.entropy),
    seconds,
    reward_errors: o.rewardErrors.slice(0, 3),
    samples: last ? mixedGroupSnippets(o.runDir, last.step) : [],
    findings: diagnoseMetrics(
      all.map((r) => r.step),
      (key) => all.map((r) => num(r, key)),
    ),
  };
}


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
