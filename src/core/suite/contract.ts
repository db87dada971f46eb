// The agreed eval suite (`*.suite.json`) and what a suite run leaves behind: the contract between the
// suite runner (issue 47) and the model registry's promotion gate (issue 48). Both sides read these
// schemas; every byte read from disk goes through them.
import * as z from 'zod';
import { Estimate } from '../evals/results';

export const SUITE_EXTENSION = '.suite.json';

/** Where an entry sits: does training behave, how it compares with the ecosystem, what the user cares about. */
export const SuiteLayer = z.enum(['training', 'benchmark', 'product']);
export type SuiteLayer = z.infer<typeof SuiteLayer>;

export const MetricGoal = z.enum(['maximize', 'minimize']);
export type MetricGoal = z.infer<typeof MetricGoal>;

/**
 * An entry's gate against the current production model.
 * - `non_inferiority: δ` — the paired difference candidate − production on the same items, oriented so that
 *   better is positive (for a `minimize` metric: production − candidate), must have the lower bound of its
 *   95 % interval ≥ −δ.
 * - `min: x` / `max: x` — an absolute floor / ceiling on the candidate's own point estimate.
 * Both may be given; each is checked.
 */
export const SuiteGate = z
  .strictObject({
    non_inferiority: z.number().nonnegative().optional().describe('δ: the lower bound of the 95 % interval of the paired difference (better is positive) must be ≥ −δ.'),
    min: z.number().optional().describe("The candidate's metric must be at least this."),
    max: z.number().optional().describe("The candidate's metric must be at most this."),
  })
  .refine((g) => g.non_inferiority !== undefined || g.min !== undefined || g.max !== undefined, { message: 'give non_inferiority, min or max' });
export type SuiteGate = z.infer<typeof SuiteGate>;

/** The fingerprint of one data file an entry read (for staleness: a dataset changed since the result). */
export const DataFingerprint = z.object({ file: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/), lines: z.number().int().nonnegative() });
export type DataFingerprint = z.infer<typeof DataFingerprint>;

/** One entry's result on one checkpoint. */
export const SuiteEntryResult = z.object({
  /** the entry's name, unique in the suite */
  name: z.string().min(1),
  layer: SuiteLayer,
  /** e.g. "pass@1", "reward", "nll" */
  metric: z.string().min(1),
  goal: MetricGoal,
  /** the metric with its 95 % interval (bootstrap over items) */
  estimate: Estimate,
  /** items (problems, chats) behind the estimate */
  n: z.number().int().nonnegative(),
  /** per item id: the item's value of the metric (the paired comparison matches items by id) */
  per_item: z.record(z.string(), z.number()),
  /** the data files the entry read, with their hashes at the time of the run */
  data: z.array(DataFingerprint),
  /** sha256 of the entry's resolved eval spec */
  spec_sha256: z.string(),
  /** the eval results folder behind this entry (relative to the suite result file's folder) */
  results_dir: z.string().optional(),
});
export type SuiteEntryResult = z.infer<typeof SuiteEntryResult>;

/** `result.json` of one (suite version, checkpoint). */
export const SuiteResult = z.object({
  kind: z.literal('suite-result'),
  version: z.literal(1),
  suite: z.object({ name: z.string(), version: z.string(), file: z.string() }),
  /** what was evaluated: a base model name or a tinker:// sampler path, and the base model it runs on */
  checkpoint: z.object({ label: z.string(), path: z.string(), model: z.string() }),
  entries: z.array(SuiteEntryResult),
  /** every entry finished */
  complete: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type SuiteResult = z.infer<typeof SuiteResult>;

/** One entry of a suite file: an eval spec (a path to a `*.eval.json`, relative to the suite file, or inline), its layer, primary metric and gate. */
export const SuiteEntrySpec = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/, { message: 'must be letters, digits, ".", "_" or "-"' }).optional().describe("Entry name, unique in the suite; default: the eval's name."),
  eval: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).describe('A *.eval.json file (relative to the suite file) or an inline eval spec.'),
  layer: SuiteLayer.describe('training (does training behave), benchmark (public benchmarks) or product (your own data).'),
  metric: z.string().min(1).optional().describe('The primary metric: "pass@1", "reward", "nll", …; default: "nll" for an NLL eval, else "pass@1".'),
  goal: MetricGoal.optional().describe('Whether higher or lower is better; default: minimize for nll, else maximize.'),
  gate: SuiteGate.optional().describe('The gate against the production model; default: non_inferiority 0.02 (see docs/suites-and-registry.md).'),
});
export type SuiteEntrySpec = z.output<typeof SuiteEntrySpec>;

export const SuiteFileSchema = z.strictObject({
  $schema: z.string().optional(),
  name: z.string().regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/).optional().describe('Suite name; default: the file name without .suite.json.'),
  entries: z.array(SuiteEntrySpec).min(1),
});
export type SuiteFile = z.output<typeof SuiteFileSchema>;

/**
 * How the registry asks for a suite run (injected: the CLI and the extension pass the suite runner).
 * Resolves to the result of (suite's current version, checkpoint), complete or as far as it got.
 */
export type SuiteRunner = (req: { suiteFile: string; checkpoint: string; signal?: AbortSignal; onProgress?: (done: number, total: number, what: string) => void }) => Promise<SuiteResult>;
