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

/** A finished run folder as the runners leave it: config.json, metrics.jsonl (one line per step), checkpoints.jsonl with its final checkpoint. */
export function writeRun(runsDir: string, name: string, config: Record<string, unknown>, steps: number): string {
  const dir = path.join(runsDir, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), `${JSON.stringify({ name, model_name: 'tinker-studio/arith-gpt', renderer_name: 'role_colon', lora_rank: 8, ...config }, null, 2)}\n`);
  fs.writeFileSync(path.join(dir, 'metrics.jsonl'), Array.from({ length: steps }, (_, i) => `${JSON.stringify({ step: i, 'optim/lr': config['learning_rate'] })}\n`).join(''));
  fs.writeFileSync(path.join(dir, 'checkpoints.jsonl'), `${JSON.stringify({ name: 'final', final: true, state_path: `tinker://${name}/weights/final`, sampler_path: samplerOf(name) })}\n`);
  return dir;
}

/**
 * The registry walk's folders: the suite, the data, an SFT warm-up run and three GRPO runs started from
 * it (demo; collapse, a learning rate that collapses; longer, more iterations), each with a stored suite
 * result. Registers none.
 */
export async function craftRuns(root: string): Promise<{ suiteFile: string; runs: Record<'demo' | 'collapse' | 'longer', string>; versions: CraftedVersion[] }> {
  const suiteFile = writeSuite(root);
  const dir = path.join(root, FIXTURE_DIR);
  fs.writeFileSync(path.join(dir, 'chats.jsonl'), Array.from({ length: 12 }, (_, i) => `${JSON.stringify({ messages: [{ role: 'user', content: `${i} + ${i}` }, { role: 'assistant', content: String(2 * i) }] })}\n`).join(''));
  fs.writeFileSync(path.join(dir, 'train.jsonl'), Array.from({ length: 30 }, (_, i) => `${JSON.stringify({ question: `${i} * 3`, answer: String(3 * i) })}\n`).join(''));
  const runsDir = path.join(dir, 'runs');
  const sft = writeRun(runsDir, 'sft-warmup', { run_kind: 'sft', learning_rate: 0.0005, max_steps: 20, dataset: { path: '../../chats.jsonl' } }, 20);
  const warm = JSON.parse(fs.readFileSync(path.join(sft, 'checkpoints.jsonl'), 'utf8')).state_path as string;
  const grpo = (lr: number, iterations: number) => ({ run_kind: 'grpo', learning_rate: lr, iterations, load_checkpoint_path: warm, dataset: { path: '../../train.jsonl' } });
  const runs = { demo: writeRun(runsDir, 'demo', grpo(0.004, 8), 8), collapse: writeRun(runsDir, 'collapse', grpo(0.5, 8), 8), longer: writeRun(runsDir, 'longer', grpo(0.004, 24), 24) };
  const versions = [{ sampler: samplerOf('demo'), solved: 24 }, { sampler: samplerOf('collapse'), solved: 8 }, { sampler: samplerOf('longer'), solved: 34 }];
  for (const v of versions) await writeResult(suiteFile, v);
  return { suiteFile, runs, versions };
}

/**
 * The registry of the walk: arith@v1 (demo) in production, promoted through the gate; arith@v2
 * (collapse) a worse candidate and arith@v3 (longer) a better one, each with its suite figures.
 */
export async function craftRegistry(registryFile: string): Promise<void> {
  const { registerFromRun, setGateSuite } = await import('../../../src/core/models/lifecycle');
  const { promote, recordSuiteResult } = await import('../../../src/core/models/promotion');
  const { suiteFile, runs } = await craftRuns(path.dirname(registryFile));
  await setGateSuite(registryFile, suiteFile);
  for (const dir of [runs.demo, runs.collapse, runs.longer]) await registerFromRun(registryFile, { name: 'arith', runDir: dir });
  await promote(registryFile, 'arith@v1', { resamples: 500, seed: 1 });
  for (const id of ['arith@v2', 'arith@v3']) await recordSuiteResult(registryFile, id);
}
