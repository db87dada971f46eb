// The fields every kind of run spec shares (model, backend and base_url, LoRA rank, learning rate,
// seed, checkpoint cadence, …), declared once with their checks and wording, plus the rules that
// span fields: base_url only with the custom backend, and "exactly one of" pairs such as a dataset's
// `path` or `hf`. A kind's schema spreads `runFields(...)` into its own object and adds what is its own.
import * as z from 'zod';
import type { BackendKind } from '../config/backendKinds';
import { specKind, type SpecKind } from './kinds';

/** Where a run trains, as a spec or a run's config.json says: what the `connect` callbacks open. */
export interface BackendChoice {
  backend: BackendKind;
  base_url?: string;
  /** the Tinker project the run's session (and so its training run) is created in */
  project_id?: string;
}

export const positiveInt = () => z.number().int().min(1);

const seedRange = () => z.number().int().min(0).max(0xffffffff);

/** A Hugging Face dataset as a spec names it (GRPO prompts, SFT chats). */
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

/** What differs between kinds in the wording (and one default) of a shared field. */
export interface RunFieldWords {
  /** what `backend` places on the server: "training and sampling", "training" */
  backendRuns: string;
  learningRate: string;
  seed: string;
}

/**
 * The top-level fields every kind's spec has, worded for `kind` (its unit and file extension). What a
 * kind measures between updates differs too much to share: each declares its own `eval_every`.
 */
export function runFields(kind: SpecKind, words: RunFieldWords) {
  const { extension, unit } = specKind(kind);
  return {
    $schema: z.string().optional().describe('JSON schema of this file (editors use it for completion).'),
    name: z
      .string()
      .regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/, { message: 'must be letters, digits, ".", "_" or "-" (it names the run directory)' })
      .optional()
      .describe(`Run name, also the run directory name. Default: the spec file name without \`${extension}\`.`),
    backend: z
      .enum(['local', 'cloud', 'custom'])
      .default('local')
      .describe(`Where ${words.backendRuns} run: the embedded local engine, the Tinker cloud, or a custom Tinker-compatible server.`),
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
    learning_rate: z.number().gt(0).optional().describe(words.learningRate),
    save_every: z.number().int().min(0).default(20).describe(`Save a checkpoint every this many ${unit.many} (0: only the final one).`),
    seed: seedRange().default(0).describe(words.seed),
    ttl_seconds: positiveInt().optional().describe('Checkpoints other than the final one expire after this many seconds.'),
    checkpoint_metadata: z
      .record(z.string().min(1), z.string())
      .optional()
      .describe('Metadata (string values) every checkpoint of the run carries on the server, besides run_name, spec_file and step; search checkpoints by it later.'),
    project_id: z.string().min(1).optional().describe('Tinker project the run is created in. Default: the tinker.projectId setting (none: the account\'s default).'),
    ...budgetFields(),
    ...wandbFields(),
  };
}

/**
 * A budget (cost/budget.ts): every run, sweep and eval spec and the agent's init_* tools take these two
 * fields, worded here once. A run checks them before each step; a resume may raise them.
 */
export function budgetFields() {
  return {
    max_cost_usd: z
      .number()
      .gt(0)
      .optional()
      .describe('Stop before a step that would take the estimated cost (tokens × the price table, `tinker.prices`) past this many US dollars; the run saves a resume point, and a resume with a higher budget continues.'),
    max_tokens_total: positiveInt()
      .optional()
      .describe('Stop before a step that would take the tokens used (training, prefill, cached prefill and sampled, all models of the run) past this many; resumable like `max_cost_usd`.'),
  };
}

/** Weights & Biases logging, with tinker-cookbook's field names; `wandb_project` turns it on. */
export function wandbFields() {
  const text = (d: string) => z.string().min(1).optional().describe(d);
  return {
    wandb_project: text('Log this run to this Weights & Biases project (turns W&B logging on). Default: the tinker.wandb.project setting, or WANDB_PROJECT.'),
    wandb_name: text('W&B run name. Default: the run directory name.'),
    wandb_entity: text('W&B entity (user or team). Default: WANDB_ENTITY, or your default entity.'),
    wandb_group: text('W&B group (a sweep sets it to the sweep name).'),
    wandb_tags: z.array(z.string().min(1)).optional().describe('W&B tags.'),
    wandb_notes: z.string().optional().describe('W&B notes.'),
  };
}

/** A seed field that may be left out (e.g. GRPO's sampling_seed). */
export const optionalSeed = (describe: string) => seedRange().optional().describe(describe);

/** How a spec treats a dataset line or row that is not a valid `record` ("problem", "chat"). */
export const onInvalidLine = (record: string) =>
  z
    .enum(['skip', 'stop'])
    .default('stop')
    .describe(`A line/row that is not a valid ${record}: "stop" fails with its file and line; "skip" leaves it out and reports it.`);

type Ctx = z.core.$RefinementCtx;

/** base_url belongs to the custom backend only. */
export function checkBaseUrl(s: { backend?: unknown; base_url?: unknown }, ctx: Ctx): void {
  if (s.base_url !== undefined && s.backend !== 'custom')
    ctx.addIssue({ code: 'custom', path: ['base_url'], message: `only used with backend "custom" (backend is "${String(s.backend)}")` });
}

/**
 * Exactly one of two optional fields, e.g. a dataset's `path` or `hf`; `what` says what each one is.
 * The JSON schema says it too (a `oneOf` in the schema's metadata, which later copies inherit), so
 * the editor flags it as the run does.
 */
export function exactlyOne<S extends z.ZodObject>(schema: S, [a, b]: readonly [string, string], what: readonly [string, string]): S {
  return schema
    .superRefine((v: Record<string, unknown>, ctx) => {
      if ((v[a] === undefined) === (v[b] === undefined))
        ctx.addIssue({ code: 'custom', message: v[a] === undefined ? `give "${a}" (${what[0]}) or "${b}" (${what[1]})` : `give either "${a}" or "${b}", not both` });
    })
    .meta({ oneOf: [{ required: [a] }, { required: [b] }] });
}

/**
 * Data held out of training (GRPO's holdout, SFT's validation): a JSONL file of `records`, or a
 * fraction of the dataset up to 0.5 (from 0 when `zero` is allowed, else above it), held out `for` a purpose.
 */
export function heldOutSet(records: string, o: { zero: boolean; for?: string }, describe: string) {
  const range = o.zero ? '0 to 0.5' : 'up to 0.5';
  const fraction = o.zero ? z.number().min(0) : z.number().gt(0);
  return exactlyOne(
    z.strictObject({
      path: z.string().min(1).optional().describe(`JSONL file of ${records} (same fields as the training file), relative to the spec file.`),
      fraction: fraction.max(0.5).optional().describe(`Fraction of the dataset held out${o.for ? ` for ${o.for}` : ''}, taken after a shuffle by \`seed\` (${range}).`),
    }),
    ['path', 'fraction'],
    ['a JSONL file', range],
  ).describe(describe);
}

/** A dataset's source: `path` (a JSONL file, relative to the spec file) or `hf` (a Hugging Face dataset). */
export function datasetSource(records: string) {
  return {
    path: z.string().min(1).optional().describe(`JSONL file of ${records}, one JSON object per line, relative to the spec file.`),
    hf: HfSource.optional(),
  };
}

/** Requires a dataset object to give exactly one source. */
export const oneSource = <S extends z.ZodObject>(dataset: S): S => exactlyOne(dataset, ['path', 'hf'], ['a JSONL file', 'a Hugging Face dataset']);
