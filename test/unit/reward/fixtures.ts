// Shared helpers of the reward runner tests: reward files written into a fresh temp dir, cases,
// and process liveness (a zombie, killed but not yet reaped, counts as gone).
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { RewardCase, RewardOutcome } from '../../../src/core/reward';

const created: string[] = [];

export function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-reward-test-'));
  created.push(dir);
  return dir;
}

/** removes every temp dir made so far (call once the runners using them are closed) */
export function removeTempDirs(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** writes `source` as `name` in a fresh temp dir and returns its absolute path */
export function rewardFile(name: string, source: string): string {
  const file = path.join(tempDir(), name);
  fs.writeFileSync(file, source);
  return file;
}

export function cases(...completions: string[]): RewardCase[] {
  return completions.map((completion) => ({ completion, groundTruth: 'gt' }));
}

export function rewards(outcomes: RewardOutcome[]): Array<number | string> {
  return outcomes.map((o) => (o.ok ? o.reward : o.error.kind));
}

export function failure(outcome: RewardOutcome | undefined): Extract<RewardOutcome, { ok: false }> {
  if (!outcome || outcome.ok) throw new Error(`expected a failed outcome, got ${JSON.stringify(outcome)}`);
  return outcome;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** polls a condition (the process table has no event to wait on) up to a generous limit */
export async function waitFor(condition: () => boolean, what: string, limitMs = 20_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** 1-based line and column of the first occurrence of `text` in `source` */
export function positionOf(source: string, text: string): { line: number; column: number } {
  const at = source.indexOf(text);
  if (at < 0) throw new Error(`fixture has no ${JSON.stringify(text)}`);
  const before = source.slice(0, at).split('\n');
  return { line: before.length, column: before[before.length - 1].length + 1 };
}
