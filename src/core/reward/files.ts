// Reward files and their companion examples files, by name only (no parsing: cheap to load at
// activation). `reward.py` → `reward.examples.jsonl` in the same folder.
import * as path from 'node:path';

export const REWARD_FILE_EXTENSIONS = ['.py', '.js', '.mjs', '.cjs', '.ts'] as const;

export function hasRewardExtension(file: string): boolean {
  return (REWARD_FILE_EXTENSIONS as readonly string[]).includes(path.extname(file).toLowerCase());
}

export function examplesFileFor(rewardFile: string): string {
  const ext = path.extname(rewardFile);
  return path.join(path.dirname(rewardFile), `${path.basename(rewardFile, ext)}.examples.jsonl`);
}

/** the reward files an examples file may belong to (its name with each reward extension) */
export function rewardFilesFor(examplesFile: string): string[] {
  const base = path.basename(examplesFile).replace(/\.examples\.jsonl$/i, '');
  return REWARD_FILE_EXTENSIONS.map((ext) => path.join(path.dirname(examplesFile), `${base}${ext}`));
}

export function isExamplesFile(file: string): boolean {
  return /\.examples\.jsonl$/i.test(file);
}
