// "Make Preference Pairs from Run": a GRPO run's training sample records (iteration_NNNNNN/
// train_samples.jsonl) → preference pairs. Per group (one prompt, group_size samples): the best sample
// against the worst when their rewards differ by at least `threshold`; groups whose samples all score
// alike teach nothing and are left out, as are samples whose reward function failed. Only the
// training samples are read — the holdout's (eval_*_samples.jsonl) are never turned into pairs, so it
// stays unseen. Each pair keeps its provenance: run, iteration, group, problem, both samples' indices
// and rewards.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { SampleRecord } from '../../protocol/sampleSchema';
import { readSamples } from '../runs/sampleRecord';
import { pairToLine, type PreferencePair } from './pairs';

export interface MakePairsOptions {
  /** least reward difference between the best and the worst sample of a group (default 0.5) */
  threshold?: number;
  /** the iterations to read (default: all the run has) */
  iterations?: readonly number[];
}

export interface MadePairs {
  pairs: Omit<PreferencePair, 'id'>[];
  /** groups read, and why the others gave no pair */
  groups: number;
  belowThreshold: number;
  iterations: number[];
  /** sample lines that did not parse, by file:line */
  problems: string[];
}

/** The iterations of a run directory that have training samples. */
export async function trainSampleIterations(runDir: string): Promise<number[]> {
  const entries = await fs.readdir(runDir).catch(() => [] as string[]);
  const out: number[] = [];
  for (const e of entries) {
    const m = /^iteration_(\d{6,})$/.exec(e);
    if (m && (await fs.stat(path.join(runDir, e, 'train_samples.jsonl')).then(() => true, () => false))) out.push(Number(m[1]));
  }
  return out.sort((a, b) => a - b);
}

function pick(group: readonly SampleRecord[], better: (a: number, b: number) => boolean): SampleRecord {
  return group.reduce((x, y) => (better(y.reward, x.reward) || (y.reward === x.reward && y.traj_idx < x.traj_idx) ? y : x));
}

/** `/abs/dir/train.jsonl:12` → `train.jsonl:12`; other ids as they are. */
export function problemIdOf(id: string): string {
  const m = /^(.*):(\d+)$/.exec(id);
  return m && path.isAbsolute(m[1]!) ? `${path.basename(m[1]!)}:${m[2]}` : id;
}

/** The pairs of a GRPO run's training samples. */
export async function makePairsFromRun(runDir: string, o: MakePairsOptions = {}): Promise<MadePairs> {
  const threshold = o.threshold ?? 0.5;
  if (!(threshold > 0)) throw new Error(`threshold must be above 0 (got ${threshold}): a pair needs a better sample`);
  const iterations = o.iterations ? [...o.iterations] : await trainSampleIterations(runDir);
  if (iterations.length === 0) throw new Error(`${runDir} has no training samples (iteration_NNNNNN/train_samples.jsonl): is it a GRPO run by Tinker Studio?`);
  const run = path.basename(runDir);
  const out: MadePairs = { pairs: [], groups: 0, belowThreshold: 0, iterations, problems: [] };
  for (const it of iterations) {
    const read = await readSamples(runDir, it, { kind: 'train' });
    if (!read) throw new Error(`${runDir}: iteration ${it} has no train_samples.jsonl`);
    for (const p of read.problems) out.problems.push(`${p.file}:${p.line}: ${p.message}`);
    const groups = new Map<number, SampleRecord[]>();
    for (const r of read.records) {
      if (r.reward_error) continue;
      const g = groups.get(r.group_idx) ?? [];
      g.push(r);
      groups.set(r.group_idx, g);
    }
    for (const [groupIdx, g] of [...groups].sort((a, b) => a[0] - b[0])) {
      out.groups++;
      const best = pick(g, (a, b) => a > b);
      const worst = pick(g, (a, b) => a < b);
      if (best.reward - worst.reward < threshold) {
        out.belowThreshold++;
        continue;
      }
      if (best.question === undefined) throw new Error(`${read.file}: group ${groupIdx} has no "question" (a run from before sample records kept it): its prompt cannot be rebuilt`);
      out.pairs.push({
        prompt: [{ role: 'user', content: best.question }],
        chosen: [{ role: 'assistant', content: best.content }],
        rejected: [{ role: 'assistant', content: worst.content }],
        meta: {
          source: {
            run,
            iteration: it,
            group_idx: groupIdx,
            // a dataset file's absolute path says where the run was made, not what the problem is
            problem_id: problemIdOf(best.problem_id),
            ground_truth: best.ground_truth,
            chosen: { traj_idx: best.traj_idx, reward: best.reward },
            rejected: { traj_idx: worst.traj_idx, reward: worst.reward },
          },
        },
      });
    }
  }
  return out;
}

/** The pairs as JSONL text (Tinker Studio's format, one pair a line). */
export function pairsJsonl(pairs: MadePairs['pairs']): string {
  return pairs.map((p) => `${pairToLine(p)}\n`).join('');
}
