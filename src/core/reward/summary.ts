// Summaries of a validation's example results, in words: cheap to load (no runner), for the editor.
import * as path from 'node:path';
import type { RewardExample } from './examples';
import type { ScanLanguage } from './staticScan';
import type { RewardOutcome } from './types';

export const DEFAULT_REWARD_RANGE: readonly [number, number] = [0, 1];

export interface ExampleResult {
  example: RewardExample;
  outcome: RewardOutcome;
  /** the same example scored again (only when the first call succeeded) */
  repeat?: RewardOutcome;
  /** whether the reward equals `example.expected` (undefined without an expected reward) */
  matches?: boolean;
}

export interface ExampleSummary {
  total: number;
  /** examples that carry an expected reward */
  withExpected: number;
  matched: number;
  /** examples whose call failed (exception, time limit, crash, not a finite number) */
  failed: number;
  /** mean reward as a run would see it (a failed call scores 0) */
  mean: number;
}

export function rewardLanguage(file: string): ScanLanguage {
  return path.extname(file).toLowerCase() === '.py' ? 'python' : 'javascript';
}

export function functionName(language: ScanLanguage): string {
  return language === 'python' ? 'compute_reward' : 'computeReward';
}

export function summarize(results: readonly ExampleResult[]): ExampleSummary {
  const withExpected = results.filter((r) => r.matches !== undefined).length;
  const matched = results.filter((r) => r.matches === true).length;
  const failed = results.filter((r) => !r.outcome.ok).length;
  const mean = results.length ? results.reduce((s, r) => s + r.outcome.reward, 0) / results.length : 0;
  return { total: results.length, withExpected, matched, failed, mean };
}

/** "Test on 5 examples — 3 match, mean 0.63" (the CodeLens title) */
export function summaryText(s: ExampleSummary): string {
  const match = s.withExpected === s.total ? `${s.matched} match` : `${s.matched} of ${s.withExpected} match`;
  const failed = s.failed > 0 ? `, ${s.failed} failed` : '';
  return `Test on ${s.total} example${s.total === 1 ? '' : 's'} — ${match}, mean ${formatReward(s.mean, 2)}${failed}`;
}

export function formatReward(x: number, digits?: number): string {
  if (digits !== undefined) return x.toFixed(digits);
  return Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(6)));
}

