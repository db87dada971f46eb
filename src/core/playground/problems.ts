// "Pick a problem": the problems of a run's dataset (holdout first, then train) with their ground
// truth, read through the run's spec as training reads them, to fill the playground's prompt.
import * as path from 'node:path';
import { loadPromptPool } from '../data/pool';
import type { Problem } from '../data/types';
import type { Role } from '../render/types';
import { readRunConfig, rewardFileOfConfig, specFileOfConfig } from '../runs/runConfig';
import { mainDataset, parseGrpoSpecFile } from '../grpo/spec';

export interface RunProblems {
  holdout: Problem[];
  train: Problem[];
  /** the run's reward file, when its config names one */
  rewardFile?: string;
  /** the spec's folder: dataset paths in problem ids are relative to it */
  specDir?: string;
}

/** The run's problems; errors say what is missing (no config, no spec, a dataset that does not load). */
export async function runProblems(runDir: string, cacheDir: string, signal?: AbortSignal): Promise<RunProblems> {
  const config = await readRunConfig(runDir);
  if (!config) throw new Error(`${runDir} has no config.json: the run's dataset is not known`);
  const specFile = specFileOfConfig(config);
  if (!specFile) throw new Error(`the config.json of ${runDir} names no spec file, so its dataset is not known (a tinker-cookbook run)`);
  const { spec, dir } = await parseGrpoSpecFile(specFile);
  const pool = await loadPromptPool(mainDataset(spec), { specDir: dir, seed: spec.seed, cacheDir, ...(signal ? { signal } : {}) });
  const rewardFile = rewardFileOfConfig(config, runDir);
  return { holdout: pool.holdout, train: pool.train, specDir: dir, ...(rewardFile ? { rewardFile } : {}) };
}

type FormRole = Extract<Role, 'system' | 'user' | 'assistant'>;
const isFormRole = (r: Role): r is FormRole => r === 'system' || r === 'user' || r === 'assistant';

/** What the playground's form takes from a problem: its conversation (system, user and assistant turns only), ground truth and the run's reward file. */
export function problemPrompt(problem: Problem, rewardFile: string | undefined): { messages: Array<{ role: FormRole; content: string }>; groundTruth: string; rewardFile?: string } {
  return {
    messages: problem.messages.flatMap((m) => (isFormRole(m.role) ? [{ role: m.role, content: m.content }] : [])),
    groundTruth: problem.groundTruth,
    ...(rewardFile ? { rewardFile } : {}),
  };
}

/** The problem with this id (a sample record's problem_id), holdout or train. */
export function findProblem(problems: RunProblems, id: string): Problem | undefined {
  const find = (x: string) => problems.holdout.find((p) => p.id === x) ?? problems.train.find((p) => p.id === x);
  const found = find(id);
  if (found || !problems.specDir) return found;
  // a run recorded before ids were relative to the spec named a dataset outside its folder by its absolute path
  const m = /^(.+):(\d+)$/.exec(id);
  if (!m || !path.isAbsolute(m[1]!)) return undefined;
  const rel = path.relative(problems.specDir, m[1]!);
  return path.isAbsolute(rel) ? undefined : find(`${rel.split(path.sep).join('/')}:${m[2]}`);
}
