// Environment files by name: `<name>.env.py`, `.env.js`, `.env.mjs`, `.env.cjs`, `.env.ts` (the
// languages reward files take). No parsing: cheap to load at activation.
import * as path from 'node:path';
import { REWARD_FILE_EXTENSIONS } from '../reward/files';

export const ENV_FILE_SUFFIXES = REWARD_FILE_EXTENSIONS.map((ext) => `.env${ext}`);

/** Whether `file` is named as an environment file (`arith.env.py`, `game.env.ts`, …). */
export function isEnvFile(file: string): boolean {
  const base = path.basename(file).toLowerCase();
  return ENV_FILE_SUFFIXES.some((s) => base.endsWith(s) && base.length > s.length);
}

/** How an eval spec names the file that grades it: an environment file as `env`, any other as `grader` (a reward file). */
export function gradingField(file: string): { env: { file: string } } | { grader: { file: string } } {
  return isEnvFile(file) ? { env: { file } } : { grader: { file } };
}

/**
 * Whether a file's text looks like an environment (it mentions initial_observation or
 * initialObservation): a `*.env.ts` of another tool that no run spec names is left alone.
 */
export function looksLikeEnv(text: string): boolean {
  return /\binitial_?[oO]bservation\b/.test(text);
}
