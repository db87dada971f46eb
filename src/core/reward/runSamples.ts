// Reading what a finished (or running) GRPO run sampled, for re-scoring with an edited reward
// function: the samples of iteration_NNNNNN/train_samples.jsonl grouped as the run grouped them,
// and the runs of a runs folder that used a given reward file (their config.json names it).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { JsonlProblem } from '../runs/jsonl';
import { readRunConfig, rewardFileOfConfig, runConfigFile } from '../runs/runConfig';
import { readSamples, SampleRecord, TRAIN_SAMPLES } from '../runs/sampleRecord';
import { iterationDirName } from '../runs/runWriter';
import type { RewardExample } from './examples';

export type SampleLine = SampleRecord;

export interface SampleGroup {
  iteration: number;
  groupIdx: number;
  problemId?: string;
  groundTruth: string;
  samples: SampleLine[];
}

export interface RunSamples {
  runDir: string;
  /** the iterations read, ascending */
  iterations: number[];
  groups: SampleGroup[];
  /** lines that were not samples (a line still being written is left out, not a problem) */
  problems: JsonlProblem[];
}

const ITERATION_DIR = /^iteration_(\d{6,})$/;

/** iteration numbers of a run directory that have a train_samples.jsonl, ascending (only the last for 'last') */
async function sampledIterations(runDir: string, which: 'last' | 'all'): Promise<number[]> {
  let names: string[];
  try {
    names = await fs.readdir(runDir);
  } catch {
    return [];
  }
  const newestFirst = names.flatMap((name) => {
    const m = ITERATION_DIR.exec(name);
    return m ? [Number(m[1])] : [];
  });
  newestFirst.sort((a, b) => b - a);
  const found: number[] = [];
  for (const it of newestFirst) {
    try {
      await fs.access(path.join(runDir, iterationDirName(it), TRAIN_SAMPLES));
      found.push(it);
      if (which === 'last') break;
    } catch {
      // an iteration that wrote no samples yet
    }
  }
  return found.reverse();
}

/** Reads the samples of the last sampled iteration (`which: 'last'`) or of every iteration. */
export async function readRunSamples(runDir: string, which: 'last' | 'all' = 'last'): Promise<RunSamples> {
  const iterations = await sampledIterations(runDir, which);
  if (iterations.length === 0) throw new Error(`${runDir} has no iteration_NNNNNN/train_samples.jsonl yet (no training iteration has finished)`);
  const groups: SampleGroup[] = [];
  const problems: JsonlProblem[] = [];
  for (const it of iterations) {
    const read = await readSamples(runDir, it, { kind: 'train' });
    if (!read) continue;
    for (const x of read.problems) problems.push(x);
    const byGroup = new Map<number, SampleGroup>();
    for (const sample of read.records) {
      let g = byGroup.get(sample.group_idx);
      if (!g) {
        g = { iteration: it, groupIdx: sample.group_idx, groundTruth: sample.ground_truth, samples: [], ...(sample.problem_id !== undefined ? { problemId: sample.problem_id } : {}) };
        byGroup.set(sample.group_idx, g);
      }
      g.samples.push(sample);
    }
    for (const g of [...byGroup.values()].sort((a, b) => a.groupIdx - b.groupIdx)) {
      g.samples.sort((a, b) => a.traj_idx - b.traj_idx);
      groups.push(g);
    }
  }
  return { runDir, iterations, groups, problems };
}

/** Run directories in `runsDir` whose config.json names `rewardFile`, newest first (by name time stamp, then mtime). */
export async function runsUsingReward(runsDir: string, rewardFile: string): Promise<string[]> {
  let names: string[];
  try {
    names = await fs.readdir(runsDir);
  } catch {
    return [];
  }
  const target = path.resolve(rewardFile);
  const found: Array<{ dir: string; mtime: number }> = [];
  for (const name of names) {
    const dir = path.join(runsDir, name);
    try {
      const config = await readRunConfig(dir);
      if (!config || rewardFileOfConfig(config, dir) !== target) continue;
      found.push({ dir, mtime: (await fs.stat(runConfigFile(dir))).mtimeMs });
    } catch {
      // not a run directory
    }
  }
  return found.sort((a, b) => b.mtime - a.mtime || b.dir.localeCompare(a.dir)).map((f) => f.dir);
}

/**
 * Examples from a run: one completion per group (the first of each), with the run's ground truth,
 * up to `max`; spread over the groups so the dataset's variety shows.
 */
export function examplesFromRun(samples: RunSamples, max: number): RewardExample[] {
  const out: RewardExample[] = [];
  const runName = path.basename(samples.runDir);
  for (const g of samples.groups) {
    for (const s of g.samples) {
      if (out.length >= max) return out;
      out.push({ completion: s.content, groundTruth: s.ground_truth, recorded: s.reward, source: `${runName}, iteration ${g.iteration}, group ${g.groupIdx}, sample ${s.traj_idx}` });
      break;
    }
  }
  return out;
}
