// GRPO run-spec files (`*.grpo.json`): the zod schema (field names follow the tinker-cookbook's
// rl/train.Config where it has one), the JSON schema generated from it for editor completion, and
// reading a spec file into a validated spec whose relative paths are resolved against its folder.
// Every problem is reported as `<file>: <field path>: <what is wrong>`.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { BackendKind } from '../config/backendKinds';
import { findJsonSyntaxError } from './jsonSyntax';

const positiveInt = () => z.number().int().min(1);

export const HfSource = z
  .strictObject({
    dataset: z.string().min(1).describe('Hugging Face dataset id, e.g. "openai/gsm8k".'),
    config: z
      .string()
      .min(1)
      .optional()
      .describe('Dataset config (subset), e.g. "main". Default: the only config, or "default", as the datasets-server lists them.'),
    split: z.string().min(1).default('train').describe('Split to read the problems from.'),
  })
  .describe('A Hugging Face dataset, read through the datasets-server rows API and cached on disk.');

export const HoldoutSpec = z
  .strictObject({
    path: z.string().min(1).optional().describe('JSONL file of holdout problems (same fields as the training file), relative to the spec file.'),
    fraction: z
      .number()
      .min(0)
      .max(0.5)
      .optional()
      .describe('Fraction of the dataset held out, taken after a shuffle by `seed` (0 to 0.5).'),
  })
  .superRefine((h, ctx) => {
    if ((h.path === undefined) === (h.fraction === undefined))
      ctx.addIssue({
        code: 'custom',
        message:
          h.path === undefined ? 'give "path" (a JSONL file) or "fraction" (0 to 0.5)' : 'give either "path" or "fraction", not both',
      });
  })
  .describe('Problems kept out of training and used by the evaluations every `eval_every` iterations. Absent: no holdout.');
export type HoldoutSpec = z.output<typeof HoldoutSpec>;

export const DatasetSpec = z
  .strictObject({
    path: z.string().min(1).optional().describe('JSONL file of problems, one JSON object per line, relative to the spec file.'),
    hf: HfSource.optional(),
    prompt_field: z
      .string()
      .min(1)
      .default('question')
      .describe('Field holding the question (a string) or a chat list [{role, content}, …]. A line without it may give a chat list in `messages`.'),
    ground_truth_field: z
      .string()
      .min(1)
      .default('answer')
      .describe('Field holding the ground truth passed to compute_reward (a string, or a number turned into a string).'),
    system_prompt: z.string().optional().describe('System message put before every question.'),
    holdout: HoldoutSpec.optional(),
    holdout_max: positiveInt().optional().describe('At most this many holdout problems are evaluated (a sample chosen by `seed`).'),
    on_invalid_line: z
      .enum(['skip', 'stop'])
      .default('stop')
      .describe('A line/row that is not a valid problem: "stop" fails with its file and line; "skip" leaves it out and reports it.'),
  })
  .superRefine((d, ctx) => {
    if ((d.path === undefined) === (d.hf === undefined))
      ctx.addIssue({
        code: 'custom',
        message: d.path === undefined ? 'give "path" (a JSONL file) or "hf" (a Hugging Face dataset)' : 'give either "path" or "hf", not both',
      });
    if (d.holdout_max !== undefined && d.holdout === undefined)
      ctx.addIssue({ code: 'custom', path: ['holdout_max'], message: 'there is no holdout to cap (add dataset.holdout)' });
  })
  .describe('Where the prompts and ground truths come from: `path` (JSONL) or `hf` (a Hugging Face dataset).');
export type DatasetSpec = z.output<typeof DatasetSpec>;

export const REWARD_EXTENSIONS = ['.py', '.js', '.mjs', '.cjs', '.ts'] as const;

const RewardSpec = z
  .strictObject({
    file: z
      .string()
      .min(1)
      .refine((f) => (REWARD_EXTENSIONS as readonly string[]).includes(path.extname(f).toLowerCase()), {
        message: `must be a ${REWARD_EXTENSIONS.slice(0, -1).join(', ')} or ${REWARD_EXTENSIONS.at(-1)} file`,
      })
      .describe(
        'Reward function file, relative to the spec file: Python `compute_reward(completion, ground_truth) -> float` or JS/TS `computeReward(completion, groundTruth)`.',
      ),
    timeout_ms: positiveInt().default(10_000).describe('Per-call time limit; a call over it scores 0 and its worker is replaced.'),
    workers: positiveInt().optional().describe('Parallel reward workers (default: 2).'),
  })
  .describe('The reward function.');

const PPO_KEYS = ['clip_low_threshold', 'clip_high_threshold'];

/** Saving the best policy as it is reached (src/core/grpo/autoCheckpoint.ts). */
export const AutoCheckpointSpec = z
  .strictObject({
    metric: z
      .enum(['train', 'holdout'])
      .default('train')
      .describe('The reward watched: "train" (env/all/reward/total, smoothed) or "holdout" (test/env/all/reward/total at each evaluation).'),
    threshold: z.number().default(0).describe('Only a reward above this is saved.'),
    min_iterations: z.number().int().min(0).default(1).describe('No auto-checkpoint before this many updates.'),
    smoothing: z.number().min(0).lt(1).default(0.8).describe('EMA factor of the train reward: smoothed = smoothing × previous + (1 − smoothing) × reward (0: none).'),
    name: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, { message: 'must be letters, digits, "_" or "-"' })
      .default('best')
      .describe('Checkpoint name prefix: checkpoints are named <name>-<step>.'),
  })
  .describe('Save a state + sampler checkpoint whenever the watched reward reaches a new best above the threshold, so the best policy is never lost to a later collapse.');

export const RunSpec = z
  .strictObject({
    $schema: z.string().optional().describe('JSON schema of this file (editors use it for completion).'),
    name: z
      .string()
      .regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/, { message: 'must be letters, digits, ".", "_" or "-" (it names the run directory)' })
      .optional()
      .describe('Run name, also the run directory name. Default: the spec file name without `.grpo.json`.'),
    backend: z
      .enum(['local', 'cloud', 'custom'])
      .default('local')
      .describe('Where training and sampling run: the embedded local engine, the Tinker cloud, or a custom Tinker-compatible server.'),
    base_url: z
      .string()
      .regex(/^https?:\/\/\S+$/, { message: 'must be an http:// or https:// URL, e.g. http://127.0.0.1:8000' })
      .optional()
      .describe('Server URL for backend "custom". Default: the tinker.customBaseUrl setting.'),
    model: z.string().min(1).describe('Base model, e.g. "tinker-studio/arith-gpt" (local engine) or "Qwen/Qwen3-8B".'),
    load_checkpoint_path: z
      .string()
      .startsWith('tinker://', { message: 'must be a tinker:// path, e.g. tinker://<run id>/weights/000020' })
      .optional()
      .describe('Start from these weights (a tinker:// state path; weights only, fresh optimizer).'),
    renderer: z
      .string()
      .min(1)
      .optional()
      .describe('Chat renderer, e.g. "qwen3", "qwen3_disable_thinking", "llama3", "role_colon", "chatml". Default: chosen from the model.'),
    lora_rank: positiveInt().default(32).describe('LoRA rank.'),
    learning_rate: z
      .number()
      .gt(0)
      .optional()
      .describe("Adam learning rate (constant). Default: the cookbook's get_lr formula for the model."),
    groups_per_batch: positiveInt().default(16).describe('Problems (groups) per iteration.'),
    group_size: z
      .number()
      .int()
      .min(2, { message: 'must be at least 2 (advantages are centred within a group, so one sample learns nothing)' })
      .default(8)
      .describe('Samples per problem; advantages are centred within each group.'),
    max_tokens: positiveInt().describe('Most tokens sampled per completion.'),
    temperature: z.number().min(0).default(1).describe('Sampling temperature (0 = greedy).'),
    stop: z
      .array(z.string().min(1))
      .optional()
      .describe("Stop strings, replacing the renderer's stop sequences."),
    iterations: positiveInt().describe('Training iterations (batches) to run.'),
    save_every: z.number().int().min(0).default(20).describe('Save a checkpoint every this many iterations (0: only the final one).'),
    eval_every: z
      .number()
      .int()
      .min(0)
      .default(20)
      .describe('Evaluate on the holdout every this many iterations, before the update (0: never).'),
    dataset: DatasetSpec,
    reward: RewardSpec,
    seed: z.number().int().min(0).max(0xffffffff).default(0).describe('Seed of the dataset shuffle and holdout split.'),
    sampling_seed: z
      .number()
      .int()
      .min(0)
      .max(0xffffffff)
      .optional()
      .describe('Fixes sampling: each request is seeded from this, the iteration and the group (or holdout problem), so the same spec on the local engine gives the same run. Absent: unseeded, as the cookbook.'),
    loss_fn: z
      .enum(['importance_sampling', 'ppo'])
      .default('importance_sampling')
      .describe('Policy-gradient loss computed by the service.'),
    loss_fn_config: z
      .record(z.string(), z.number())
      .optional()
      .describe('Loss parameters; for "ppo": clip_low_threshold and clip_high_threshold (ratio bounds, e.g. 0.8 and 1.2).'),
    remove_constant_reward_groups: z
      .boolean()
      .default(false)
      .describe('Drop groups whose rewards are all equal (default: keep them, with zero advantage).'),
    ttl_seconds: positiveInt().optional().describe('Checkpoints other than the final one expire after this many seconds.'),
    auto_checkpoint: AutoCheckpointSpec.optional(),
  })
  .superRefine((s, ctx) => {
    if (s.auto_checkpoint?.metric === 'holdout' && s.eval_every === 0)
      ctx.addIssue({ code: 'custom', path: ['auto_checkpoint', 'metric'], message: '"holdout" needs eval_every > 0 (the holdout reward is measured only at evaluations)' });
    if (s.base_url !== undefined && s.backend !== 'custom')
      ctx.addIssue({ code: 'custom', path: ['base_url'], message: `only used with backend "custom" (backend is "${s.backend}")` });
    if (s.loss_fn_config !== undefined) {
      if (s.loss_fn !== 'ppo') ctx.addIssue({ code: 'custom', path: ['loss_fn_config'], message: `only used with loss_fn "ppo"` });
      else
        for (const key of Object.keys(s.loss_fn_config))
          if (!PPO_KEYS.includes(key))
            ctx.addIssue({ code: 'custom', path: ['loss_fn_config', key], message: `unknown ppo parameter (known: ${PPO_KEYS.join(', ')})` });
      const { clip_low_threshold: lo, clip_high_threshold: hi } = s.loss_fn_config;
      if (lo !== undefined && hi !== undefined && !(lo < hi))
        ctx.addIssue({ code: 'custom', path: ['loss_fn_config'], message: 'clip_low_threshold must be below clip_high_threshold' });
    }
  })
  .describe('A GRPO run on Tinker Studio: model, dataset, reward function and hyper-parameters.');

/** A spec as read from its file (defaults applied, paths as written). */
export type RunSpec = z.output<typeof RunSpec>;
/** A spec as written in a file (defaulted fields optional). */
export type RunSpecInput = z.input<typeof RunSpec>;
/** A spec ready to run: named, and every file path absolute. */
export type ResolvedRunSpec = RunSpec & { name: string };

/** Where a run trains, as a spec (GRPO or SFT) or a run's config.json says: what the `connect` callbacks open. */
export interface BackendChoice {
  backend: BackendKind;
  base_url?: string;
}

export interface LoadedRunSpec {
  /** absolute path of the spec file */
  file: string;
  /** its folder, against which the spec's relative paths were resolved */
  dir: string;
  spec: ResolvedRunSpec;
}

/** A spec file that cannot be used; `problems` holds one line per problem, each naming file and field. */
export class RunSpecError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'RunSpecError';
  }
}

/** The JSON schema contributed for `*.grpo.json` (draft-07, which VS Code's JSON support reads fully). */
export function runSpecJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(RunSpec, {
    target: 'draft-07',
    io: 'input',
    // the "exactly one of" refinements are invisible to JSON schema; say them so editors flag them too
    override: ({ zodSchema, jsonSchema }) => {
      // integers carry the safe-integer range as bounds; noise in an editor's hover
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (zodSchema === DatasetSpec) jsonSchema.oneOf = [{ required: ['path'] }, { required: ['hf'] }];
      if (zodSchema === HoldoutSpec) jsonSchema.oneOf = [{ required: ['path'] }, { required: ['fraction'] }];
    },
  });
}

/** The run name a spec file gives when it names none: its file name without `.grpo.json`. */
export function defaultRunName(file: string): string {
  const base = path.basename(file).replace(/\.grpo\.json$/i, '').replace(/\.json$/i, '');
  const cleaned = base.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.]+/, '');
  return cleaned === '' ? 'run' : cleaned;
}

/** Parses and validates spec text; `fileLabel` prefixes every message. Throws RunSpecError. */
export function parseRunSpecText(text: string, fileLabel: string): RunSpec {
  return validateRunSpec(parseJsonWithPosition(text, fileLabel), fileLabel);
}

function validateRunSpec(value: unknown, fileLabel: string): RunSpec {
  const result = RunSpec.safeParse(value, { reportInput: true });
  if (!result.success) throw new RunSpecError(result.error.issues.map((i) => `${fileLabel}: ${formatIssue(i)}`));
  return result.data;
}

/** A spec file's text; a RunSpecError naming the file when it cannot be read. */
export async function readSpecText(abs: string): Promise<string> {
  try {
    return await fs.readFile(abs, 'utf8');
  } catch (err) {
    throw new RunSpecError([`${abs}: cannot read the spec file (${(err as NodeJS.ErrnoException).code ?? String(err)})`]);
  }
}

/** Reads a spec file, validates it, names it and resolves its paths; checks the files it names exist. */
export async function parseRunSpecFile(file: string): Promise<LoadedRunSpec> {
  const abs = path.resolve(file);
  const text = await readSpecText(abs);
  return loadRunSpec(parseRunSpecText(text, path.basename(abs)), abs);
}

/**
 * Validates a spec given as a value (e.g. a spec file's JSON with an agent's overrides on top), as if it
 * were the file `specFile`: relative paths resolve against that file's folder. Throws RunSpecError.
 */
export async function parseRunSpecValue(value: unknown, specFile: string): Promise<LoadedRunSpec> {
  return loadRunSpec(validateRunSpec(value, path.basename(specFile)), path.resolve(specFile));
}

async function loadRunSpec(raw: RunSpec, abs: string): Promise<LoadedRunSpec> {
  const spec = resolveRunSpec(raw, abs);
  await checkSpecFiles(abs, [
    ['dataset.path', raw.dataset.path, spec.dataset.path],
    ['dataset.holdout.path', raw.dataset.holdout?.path, spec.dataset.holdout?.path],
    ['reward.file', raw.reward.file, spec.reward.file],
  ]);
  return { file: abs, dir: path.dirname(abs), spec };
}

/**
 * Throws a RunSpecError naming every file a spec names that is missing or not a file; each entry is
 * [field, the path as written, the path resolved] (undefined: the spec does not name that file).
 */
export async function checkSpecFiles(specFile: string, entries: ReadonlyArray<readonly [string, string | undefined, string | undefined]>): Promise<void> {
  const label = path.basename(specFile);
  const missing: string[] = [];
  for (const [field, written, resolved] of entries) {
    if (written === undefined || resolved === undefined) continue;
    const st = await fs.stat(resolved).catch(() => undefined);
    if (!st) missing.push(`${label}: ${field}: file "${written}" not found (looked for ${resolved})`);
    else if (!st.isFile()) missing.push(`${label}: ${field}: "${written}" is not a file (${resolved})`);
  }
  if (missing.length > 0) throw new RunSpecError(missing);
}

/** Names the spec (from its file when it has no name) and makes its paths absolute. */
export function resolveRunSpec(spec: RunSpec, specFile: string): ResolvedRunSpec {
  const dir = path.dirname(path.resolve(specFile));
  const at = (p: string) => path.resolve(dir, p);
  const { holdout } = spec.dataset;
  return {
    ...spec,
    name: spec.name ?? defaultRunName(specFile),
    dataset: {
      ...spec.dataset,
      ...(spec.dataset.path !== undefined ? { path: at(spec.dataset.path) } : {}),
      ...(holdout?.path !== undefined ? { holdout: { ...holdout, path: at(holdout.path) } } : {}),
    },
    reward: { ...spec.reward, file: at(spec.reward.file) },
  };
}

/** JSON.parse, with a syntax error reported as `<file>:<line>:<column>: invalid JSON: …`. */
export function parseJsonWithPosition(text: string, fileLabel: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === '') throw new RunSpecError([`${fileLabel}: the file is empty (expected a JSON object)`]);
  try {
    return JSON.parse(body);
  } catch (err) {
    const found = findJsonSyntaxError(body);
    if (found) throw new RunSpecError([`${fileLabel}:${found.line}:${found.column}: invalid JSON: ${found.message}`]);
    throw new RunSpecError([`${fileLabel}: invalid JSON: ${err instanceof Error ? err.message : String(err)}`]);
  }
}

type Issue = z.core.$ZodIssue;

/** `dataset.holdout.fraction: must be at most 0.5` — the field path, then what is wrong in plain words. */
export function formatIssue(issue: Issue, root: z.core.$ZodType = RunSpec): string {
  const where = (extra: PropertyKey[] = []) => fieldPath([...issue.path, ...extra]);
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return `${where()}: is required`;
      return `${where()}: must be ${typeWord(issue.expected)}, not ${describeValue(issue.input)}`;
    case 'invalid_value':
      return `${where()}: must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')} (got ${describeValue(issue.input)})`;
    case 'too_big': {
      const bound = String(issue.maximum);
      if (issue.origin === 'string') return `${where()}: must be at most ${bound} characters long`;
      if (issue.origin === 'array') return `${where()}: must have at most ${bound} items`;
      return `${where()}: must be ${issue.inclusive ? 'at most' : 'less than'} ${bound}`;
    }
    case 'too_small': {
      if (issue.message && !issue.message.startsWith('Too small')) return `${where()}: ${issue.message}`;
      const bound = String(issue.minimum);
      if (issue.origin === 'string') return issue.minimum === 1 ? `${where()}: must not be empty` : `${where()}: must be at least ${bound} characters long`;
      if (issue.origin === 'array') return issue.minimum === 1 ? `${where()}: must not be empty` : `${where()}: must have at least ${bound} items`;
      return `${where()}: must be ${issue.inclusive ? 'at least' : 'greater than'} ${bound}`;
    }
    case 'unrecognized_keys':
      return issue.keys
        .map((key) => {
          const known = knownKeysAt(root, issue.path);
          const near = closest(key, known);
          return `${where([key])}: unknown field${near ? ` (did you mean "${near}"?)` : ''}`;
        })
        .join('; ');
    default:
      return `${where()}: ${issue.message}`;
  }
}

function fieldPath(p: readonly PropertyKey[]): string {
  if (p.length === 0) return '(top level)';
  return p.map((k, i) => (typeof k === 'number' ? `[${k}]` : `${i === 0 ? '' : '.'}${String(k)}`)).join('');
}

function typeWord(expected: string): string {
  const words: Record<string, string> = {
    int: 'a whole number',
    number: 'a number',
    string: 'a string',
    boolean: 'true or false',
    object: 'an object',
    array: 'a list',
    record: 'an object',
  };
  return words[expected] ?? expected;
}

function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  return String(v);
}

/** The field names the schema allows at an object path (for "did you mean"). */
function knownKeysAt(root: z.core.$ZodType, p: readonly PropertyKey[]): string[] {
  let schema: z.core.$ZodType = root;
  for (const key of p) {
    const inner = unwrap(schema);
    if (!(inner instanceof z.ZodObject) || typeof key !== 'string') return [];
    const next: z.core.$ZodType | undefined = inner.shape[key];
    if (next === undefined) return [];
    schema = next;
  }
  const obj = unwrap(schema);
  return obj instanceof z.ZodObject ? Object.keys(obj.shape) : [];
}

function unwrap(s: z.core.$ZodType): z.core.$ZodType {
  let cur = s;
  while (cur instanceof z.ZodOptional || cur instanceof z.ZodDefault) cur = cur.unwrap();
  return cur;
}

/** The known name within edit distance 2 of `key`, if one is that close. */
function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = 3;
  for (const k of known) {
    const d = editDistance(key.toLowerCase(), k.toLowerCase());
    if (d < bestD) [best, bestD] = [k, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}
