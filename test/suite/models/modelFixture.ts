// A registry with crafted suite results, written through the real registry core: a suite file with
// one pass@1 entry (non-inferiority δ 0.02) in <root>/models-fixture/, and per version a stored
// suite result (the real store's path) whose per-problem values are 1 on a fixed share of 40 problems.
// Shared by the Models view's host test and its UI screenshots' fixture script.
import * as fs from 'fs';
import * as path from 'path';
import type { SuiteResult } from '../../../src/core/suite/contract';
import { loadSuite, suiteResultDir, SUITE_RESULT_FILE } from '../../../src/core/suite/store';

export const FIXTURE_DIR = 'models-fixture';
export const PROBLEMS = 40;

export interface CraftedVersion {
  sampler: string;
  /** problems 0 … solved-1 score 1, the rest 0 */
  solved: number;
}

export function samplerOf(run: string): string {
  return `tinker://${run}/sampler_weights/final`;
}

/** Writes the suite file; its path. */
export function writeSuite(root: string): string {
  const dir = path.join(root, FIXTURE_DIR);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'arith.suite.json');
  fs.writeFileSync(file, `${JSON.stringify({ entries: [{ name: 'holdout', eval: 'holdout.eval.json', layer: 'product', metric: 'pass@1', gate: { non_inferiority: 0.02 } }] }, null, 2)}\n`);
  return file;
}

/** Stores a complete suite result of `v` where the registry's gate reads it. */
export async function writeResult(suiteFile: string, v: CraftedVersion): Promise<void> {
  const suite = await loadSuite(suiteFile);
  const per: Record<string, number> = {};
  for (let i = 0; i < PROBLEMS; i++) per[`arith:${i}`] = i < v.solved ? 1 : 0;
  const mean = v.solved / PROBLEMS;
  const se = Math.sqrt((mean * (1 - mean)) / PROBLEMS);
  const now = new Date().toISOString();
  const result: SuiteResult = {
    kind: 'suite-result',
    version: 1,
    suite: { name: suite.name, version: suite.version, file: suite.file },
    checkpoint: { label: v.sampler, path: v.sampler, model: 'tinker-studio/arith-gpt' },
    entries: [{ name: 'holdout', layer: 'product', metric: 'pass@1', goal: 'maximize', estimate: { value: mean, lo: Math.max(0, mean - 1.96 * se), hi: Math.min(1, mean + 1.96 * se) }, n: PROBLEMS, per_item: per, data: [], spec_sha256: '0'.repeat(64) }],
    complete: true,
    created_at: now,
    updated_at: now,
  };
  const dir = suiteResultDir(suite, v.sampler);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, SUITE_RESULT_FILE), `${JSON.stringify(result, null, 2)}\n`);
}

/**
 * The registry of the walk: arith@v1 in production (promoted through the gate), arith@v2 a worse
 * candidate, arith@v3 a better one, each with a stored result; returns the registry file.
 */
export async function craftRegistry(registryFile: string): Promise<{ suiteFile: string; versions: Record<'v1' | 'v2' | 'v3', CraftedVersion> }> {
  const root = path.dirname(registryFile);
  const { registerFromPath, setGateSuite } = await import('../../../src/core/models/lifecycle');
  const { promote, recordSuiteResult } = await import('../../../src/core/models/promotion');
  const suiteFile = writeSuite(root);
  const versions = { v1: { sampler: samplerOf('demo'), solved: 24 }, v2: { sampler: samplerOf('collapse'), solved: 8 }, v3: { sampler: samplerOf('longer'), solved: 34 } };
  await setGateSuite(registryFile, suiteFile);
  for (const [key, v] of Object.entries(versions)) {
    await writeResult(suiteFile, v);
    await registerFromPath(registryFile, { name: 'arith', samplerPath: v.sampler, statePath: v.sampler.replace('sampler_weights', 'weights'), baseModel: 'tinker-studio/arith-gpt', renderer: 'role_colon', loraRank: 8, description: `the ${key} fixture` });
  }
  await promote(registryFile, 'arith@v1', { resamples: 500, seed: 1 });
  for (const id of ['arith@v2', 'arith@v3']) await recordSuiteResult(registryFile, id);
  return { suiteFile, versions };
}
