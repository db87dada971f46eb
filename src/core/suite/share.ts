// Sampling shared between a suite's entries: entries whose evals draw the same samples (same problems,
// sampling settings, model and seed) and differ only in how they grade sample once. The first such
// entry samples into its own results folder; each other one takes those samples into its folder,
// graded again by its own grader (or copied as they are when the grader is the same), before the eval
// runner resumes it: the runner then finds every sample there and asks the server for none.
// An environment grades episodes it takes part in, and an NLL eval samples nothing: neither shares.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { recordedRewardError, type SampleRecord } from '../../protocol/sampleSchema';
import { readTargetSamples, targetSamplesFile } from '../evals/results';
import type { EvalSpec } from '../evals/spec';
import { createRewardRunner } from '../reward';
import { canonicalJson } from './store';

/** Fields that do not change which samples are drawn. */
const NOT_SAMPLING = new Set(['$schema', 'name', 'grader', 'backend', 'base_url', 'concurrency', 'baseline']);

/** What decides an eval's samples, or undefined when its samples cannot be shared (an environment, an NLL eval). */
export function samplingKey(spec: EvalSpec): string | undefined {
  if (spec.env || !spec.grader || (spec as Record<string, unknown>)['nll'] !== undefined) return undefined;
  const kept = Object.fromEntries(Object.entries(spec).filter(([k, v]) => !NOT_SAMPLING.has(k) && v !== undefined));
  return canonicalJson(kept);
}

const sameGrader = (a: EvalSpec, b: EvalSpec) => canonicalJson(a.grader) === canonicalJson(b.grader);

const sampleKey = (r: Pick<SampleRecord, 'problem_id' | 'traj_idx'>) => `${r.problem_id}\u0000${r.traj_idx}`;

/**
 * Brings into `toDir` the samples of `fromDir` (one target, `targetId`) it lacks, graded by `to`'s
 * grader. Appends in chunks, so an abort keeps what was graded. Returns how many samples came over.
 */
export async function takeSharedSamples(a: {
  fromDir: string;
  from: EvalSpec;
  toDir: string;
  to: EvalSpec;
  targetId: string;
  python?: string;
  signal?: AbortSignal;
  onGraded?: (count: number) => void;
}): Promise<number> {
  const source = readTargetSamples(a.fromDir, a.targetId);
  const file = targetSamplesFile(a.toDir, a.targetId);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // a torn tail (a crash mid-line) is dropped before appending, as the eval runner does
  if (fs.existsSync(file)) {
    const text = fs.readFileSync(file, 'utf8');
    if (text.length && !text.endsWith('\n')) fs.writeFileSync(file, text.slice(0, text.lastIndexOf('\n') + 1));
  }
  const have = new Set(readTargetSamples(a.toDir, a.targetId).map(sampleKey));
  const missing = source.filter((r) => !have.has(sampleKey(r)));
  if (missing.length === 0) return 0;
  if (sameGrader(a.from, a.to)) {
    fs.appendFileSync(file, missing.map((r) => JSON.stringify(r) + '\n').join(''));
    a.onGraded?.(missing.length);
    return missing.length;
  }
  const g = a.to.grader!;
  const runner = await createRewardRunner({ file: g.file, python: a.python, workers: g.workers, timeoutMs: g.timeout_ms, ...(a.signal ? { signal: a.signal } : {}) });
  let taken = 0;
  try {
    const CHUNK = 64;
    for (let i = 0; i < missing.length; i += CHUNK) {
      if (a.signal?.aborted) break;
      const chunk = missing.slice(i, i + CHUNK);
      const outcomes = await runner.score(chunk.map((r) => ({ completion: r.content, groundTruth: r.ground_truth })), a.signal);
      const regraded = chunk.map((r, j): SampleRecord => {
        const o = outcomes[j]!;
        const { reward_error: _e, format: _f, ...rest } = r;
        return { ...rest, reward: o.reward, ...(o.ok ? (o.format !== undefined ? { format: o.format } : {}) : { reward_error: recordedRewardError(o.error) }) };
      });
      fs.appendFileSync(file, regraded.map((r) => JSON.stringify(r) + '\n').join(''));
      taken += chunk.length;
      a.onGraded?.(taken);
    }
  } finally {
    await runner.close().catch(() => undefined);
  }
  return taken;
}
