// A dry run of an edited reward function before any training step is spent: score a finished run's
// samples (grouped as the run grouped them) or fresh samples from the model, and report the reward
// distribution and the GRPO no-signal fractions it would give (groups whose samples all score the
// same teach nothing: all bad, all good, or mixed — the env/all/by_group/frac_* metrics).
import { renderedPrompt } from '../data/problem';
import * as path from 'node:path';
import { groupBreakdown, GroupBreakdown } from './advantages';
import { sampleGroup, scoreGroups, stopParam } from './rollout';
import type { Problem } from '../data/types';
import type { Renderer } from '../render/types';
import type { SamplingClient } from '../tinker/client';
import { createRewardRunner } from '../reward/index';
import { readRunSamples } from '../reward/runSamples';
import type { RewardOutcome, RewardRunner } from '../reward/types';
import { DEFAULT_REWARD_RANGE } from '../reward/summary';

export interface DryRunGroup {
  /** "iteration 3, group 5" or the problem id */
  label: string;
  groundTruth: string;
  rewards: number[];
  /** what the run recorded for the same samples (run dry runs only) */
  recorded?: number[];
}

export interface HistogramBin {
  from: number;
  to: number;
  count: number;
}

export interface DryRunReport {
  source: 'run' | 'model';
  /** the run directory, or the model sampled */
  origin: string;
  groups: DryRunGroup[];
  samples: number;
  mean: number;
  std: number;
  min: number;
  max: number;
  /** ten equal bins over the reward range; values outside it are counted in below/above */
  histogram: HistogramBin[];
  below: number;
  above: number;
  breakdown: GroupBreakdown;
  /** calls that failed (scored 0), by what went wrong */
  failures: Array<{ kind: string; message: string; count: number }>;
  /** the run's own rewards for the same samples, to compare (run dry runs only) */
  recorded?: { mean: number; breakdown: GroupBreakdown; changed: number };
}

interface RunnerOptions {
  /** the reward file; `source` replaces its text on disk (unsaved edits) */
  file: string;
  source?: string;
  python?: string;
  environment?: readonly string[];
  timeoutMs?: number;
  workers?: number;
  range?: readonly [number, number];
  signal?: AbortSignal;
}

export interface DryRunOnRunOptions extends RunnerOptions {
  runDir: string;
  /** the last sampled iteration (default) or all of them */
  iterations?: 'last' | 'all';
}

/** Re-scores a run's samples with the (edited) reward function. */
export async function dryRunOnRun(o: DryRunOnRunOptions): Promise<DryRunReport> {
  const samples = await readRunSamples(o.runDir, o.iterations ?? 'last');
  return withRunner(o, async (runner) => {
    const cases = samples.groups.flatMap((g) => g.samples.map((s) => ({ completion: s.content, groundTruth: s.ground_truth })));
    const outcomes = await runner.score(cases, o.signal);
    let k = 0;
    const groups = samples.groups.map((g): DryRunGroup => ({
      label: `iteration ${g.iteration}, group ${g.groupIdx}`,
      groundTruth: g.groundTruth,
      rewards: g.samples.map(() => outcomes[k++]!.reward),
      recorded: g.samples.map((s) => s.reward),
    }));
    const report = buildReport('run', o.runDir, groups, outcomes, o.range);
    const recordedAll = groups.flatMap((g) => g.recorded ?? []);
    const rewardsAll = groups.flatMap((g) => g.rewards);
    report.recorded = {
      mean: mean(recordedAll),
      breakdown: groupBreakdown(groups.map((g) => g.recorded ?? [])),
      changed: rewardsAll.filter((r, i) => r !== recordedAll[i]).length,
    };
    return report;
  });
}

export interface DryRunOnModelOptions extends RunnerOptions {
  sampler: SamplingClient;
  renderer: Renderer;
  /** a model name or sampler path, for the report */
  origin: string;
  problems: readonly Problem[];
  groupSize: number;
  maxTokens: number;
  temperature: number;
  /** stop strings replacing the renderer's */
  stop?: string[];
  seed?: number;
}

/** Samples `groupSize` completions of each problem from the model and scores them. */
export async function dryRunOnModel(o: DryRunOnModelOptions): Promise<DryRunReport> {
  return withRunner(o, async (runner) => {
    const stop = o.stop?.length ? o.stop : stopParam(o.renderer.stopSequences());
    const params = { max_tokens: o.maxTokens, temperature: o.temperature, stop, ...(o.seed !== undefined ? { seed: o.seed } : {}) };
    const sampled = await Promise.all(
      o.problems.map((p) => sampleGroup(o.sampler, o.renderer, p, renderedPrompt(o.renderer, p), o.groupSize, params, o.signal)),
    );
    const scored = await scoreGroups(sampled, runner, o.signal);
    const groups = scored.map((g): DryRunGroup => ({ label: g.problem.id, groundTruth: g.problem.groundTruth, rewards: g.rollouts.map((r) => r.reward) }));
    const outcomes: RewardOutcome[] = scored.flatMap((g) =>
      g.rollouts.map((r): RewardOutcome => (r.rewardError ? { ok: false, reward: 0, error: r.rewardError, durationMs: 0 } : { ok: true, reward: r.reward, durationMs: 0 })),
    );
    return buildReport('model', o.origin, groups, outcomes, o.range);
  });
}

async function withRunner<T>(o: RunnerOptions, use: (runner: RewardRunner) => Promise<T>): Promise<T> {
  const runner = await createRewardRunner({
    file: o.file,
    ...(o.source !== undefined ? { source: o.source } : {}),
    ...(o.python !== undefined ? { python: o.python } : {}),
    ...(o.environment !== undefined ? { environment: o.environment } : {}),
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
    ...(o.workers !== undefined ? { workers: o.workers } : {}),
    ...(o.signal !== undefined ? { signal: o.signal } : {}),
  });
  try {
    return await use(runner);
  } finally {
    await runner.close();
  }
}

function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0;
}

export function buildReport(source: DryRunReport['source'], origin: string, groups: DryRunGroup[], outcomes: readonly RewardOutcome[], range = DEFAULT_REWARD_RANGE): DryRunReport {
  const rewards = groups.flatMap((g) => g.rewards);
  const m = mean(rewards);
  const std = rewards.length ? Math.sqrt(rewards.reduce((s, x) => s + (x - m) ** 2, 0) / rewards.length) : 0;
  const [lo, hi] = range;
  const width = (hi - lo) / 10;
  const histogram: HistogramBin[] = Array.from({ length: 10 }, (_, i) => ({ from: lo + i * width, to: i === 9 ? hi : lo + (i + 1) * width, count: 0 }));
  let below = 0;
  let above = 0;
  for (const r of rewards) {
    if (r < lo) below++;
    else if (r > hi) above++;
    else histogram[Math.min(9, Math.floor((r - lo) / width))]!.count++;
  }
  const failures = new Map<string, { kind: string; message: string; count: number }>();
  for (const o of outcomes) {
    if (o.ok) continue;
    const key = `${o.error.kind}|${o.error.message}`;
    const f = failures.get(key);
    if (f) f.count++;
    else failures.set(key, { kind: o.error.kind, message: o.error.message, count: 1 });
  }
  return {
    source,
    origin,
    groups,
    samples: rewards.length,
    mean: m,
    std,
    min: rewards.length ? Math.min(...rewards) : 0,
    max: rewards.length ? Math.max(...rewards) : 0,
    histogram,
    below,
    above,
    breakdown: groupBreakdown(groups.map((g) => g.rewards)),
    failures: [...failures.values()].sort((a, b) => b.count - a.count),
  };
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const num = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(3));

/** The report as Markdown: tables (readable by screen readers) and a text bar per histogram bin. */
export function dryRunMarkdown(r: DryRunReport, rewardFile: string): string {
  const lines: string[] = [];
  lines.push(`# Dry run of ${rewardFile}`, '');
  lines.push(r.source === 'run' ? `Re-scored the samples of run \`${path.basename(r.origin)}\` (${r.origin}).` : `Scored fresh samples of \`${r.origin}\`.`, '');
  lines.push(`${r.samples} samples in ${r.groups.length} groups: mean reward **${num(r.mean)}** (std ${num(r.std)}, min ${num(r.min)}, max ${num(r.max)}).`, '');
  lines.push('## No-signal fractions', '', '| groups | fraction | meaning |', '|---|---|---|');
  lines.push(`| all bad | ${pct(r.breakdown.frac_all_bad)} | every sample scored the same, below 0.5: no learning signal |`);
  lines.push(`| all good | ${pct(r.breakdown.frac_all_good)} | every sample scored the same, 0.5 or more: no learning signal |`);
  lines.push(`| mixed | ${pct(r.breakdown.frac_mixed)} | rewards differ within the group: GRPO learns from these |`, '');
  if (r.recorded) {
    lines.push('## Compared with the run', '', '| | this function | the run |', '|---|---|---|');
    lines.push(`| mean reward | ${num(r.mean)} | ${num(r.recorded.mean)} |`);
    lines.push(`| all bad | ${pct(r.breakdown.frac_all_bad)} | ${pct(r.recorded.breakdown.frac_all_bad)} |`);
    lines.push(`| all good | ${pct(r.breakdown.frac_all_good)} | ${pct(r.recorded.breakdown.frac_all_good)} |`);
    lines.push(`| mixed | ${pct(r.breakdown.frac_mixed)} | ${pct(r.recorded.breakdown.frac_mixed)} |`, '');
    lines.push(`${r.recorded.changed} of ${r.samples} samples get a different reward than the run gave them.`, '');
  }
  lines.push('## Reward distribution', '', '| reward | samples | |', '|---|---|---|');
  const most = Math.max(1, ...r.histogram.map((b) => b.count));
  if (r.below) lines.push(`| below ${num(r.histogram[0]!.from)} | ${r.below} | |`);
  for (const b of r.histogram) lines.push(`| ${num(b.from)} – ${num(b.to)} | ${b.count} | ${'█'.repeat(Math.round((20 * b.count) / most))} |`);
  if (r.above) lines.push(`| above ${num(r.histogram[9]!.to)} | ${r.above} | |`);
  lines.push('');
  if (r.failures.length) {
    lines.push('## Failed calls (scored 0)', '', '| kind | count | message |', '|---|---|---|');
    for (const f of r.failures) lines.push(`| ${f.kind} | ${f.count} | ${f.message.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`);
    lines.push('');
  }
  return lines.join('\n');
}
