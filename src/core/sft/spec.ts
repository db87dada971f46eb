// SFT run-spec files (`*.sft.json`): the zod schema (names after the cookbook's supervised/train.Config
// where it has one), the JSON schema generated from it for the editor, and reading a spec file into a
// validated spec with absolute paths. Shares the GRPO spec's JSON parsing and error wording.
import * as path from 'node:path';
import { z } from 'zod';
import { checkSpecFiles, formatIssue, HfSource, parseJsonWithPosition, readSpecText, RunSpecError } from '../runs/spec';

const positiveInt = () => z.number().int().min(1);

export const ValidationSpec = z
  .strictObject({
    path: z.string().min(1).optional().describe('JSONL file of validation chats (same fields as the training file), relative to the spec file.'),
    fraction: z.number().gt(0).max(0.5).optional().describe('Fraction of the dataset held out for validation, taken after a shuffle by `seed` (up to 0.5).'),
  })
  .superRefine((v, ctx) => {
    if ((v.path === undefined) === (v.fraction === undefined))
      ctx.addIssue({ code: 'custom', message: v.path === undefined ? 'give "path" (a JSONL file) or "fraction" (up to 0.5)' : 'give either "path" or "fraction", not both' });
  })
  .describe('Chats kept out of training; their NLL (test/nll) is measured every `eval_every` steps. Absent: no validation.');

export const SftDatasetSpec = z
  .strictObject({
    path: z.string().min(1).optional().describe('JSONL file of chats, one JSON object per line, relative to the spec file.'),
    hf: HfSource.optional(),
    messages_field: z.string().min(1).default('messages').describe('Field holding a chat list [{role, content}, …] (used when the record has it).'),
    prompt_field: z.string().min(1).default('prompt').describe('Otherwise: field holding the user turn (a string).'),
    completion_field: z.string().min(1).default('completion').describe('Otherwise: field holding the assistant answer (a string).'),
    system_prompt: z.string().optional().describe('System message put before every chat that has none.'),
    validation: ValidationSpec.optional(),
    on_invalid_line: z
      .enum(['skip', 'stop'])
      .default('stop')
      .describe('A line/row that is not a valid chat: "stop" fails with its file and line; "skip" leaves it out and reports it.'),
  })
  .superRefine((d, ctx) => {
    if ((d.path === undefined) === (d.hf === undefined))
      ctx.addIssue({ code: 'custom', message: d.path === undefined ? 'give "path" (a JSONL file) or "hf" (a Hugging Face dataset)' : 'give either "path" or "hf", not both' });
  })
  .describe('The chats to train on: `path` (JSONL) or `hf` (a Hugging Face dataset); each record a `messages` chat or prompt/completion fields.');
export type SftDatasetSpec = z.output<typeof SftDatasetSpec>;

export const SftSpec = z
  .strictObject({
    $schema: z.string().optional().describe('JSON schema of this file (editors use it for completion).'),
    name: z
      .string()
      .regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/, { message: 'must be letters, digits, ".", "_" or "-" (it names the run directory)' })
      .optional()
      .describe('Run name, also the run directory name. Default: the spec file name without `.sft.json`.'),
    backend: z.enum(['local', 'cloud', 'custom']).default('local').describe('Where training runs: the embedded local engine, the Tinker cloud, or a custom Tinker-compatible server.'),
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
    renderer: z.string().min(1).optional().describe('Chat renderer, e.g. "qwen3", "llama3", "role_colon", "chatml". Default: chosen from the model.'),
    lora_rank: positiveInt().default(32).describe('LoRA rank.'),
    dataset: SftDatasetSpec,
    train_on_what: z
      .enum(['last_assistant_message', 'all_assistant_messages'])
      .default('last_assistant_message')
      .describe('Which assistant turns carry loss: the last one (default) or all of them.'),
    batch_size: positiveInt().default(128).describe('Chats per optimizer step.'),
    num_epochs: positiveInt().optional().describe('Passes over the training chats (default 1). Give this or `max_steps`, or both (the smaller wins).'),
    max_steps: positiveInt().optional().describe('Stop after this many steps.'),
    learning_rate: z.number().gt(0).optional().describe("Peak Adam learning rate. Default: the cookbook's get_lr formula for the model."),
    lr_schedule: z.enum(['linear', 'cosine', 'constant']).default('linear').describe('Multiplier of the learning rate over the steps after warmup.'),
    warmup_steps: z.number().int().min(0).default(0).describe('Steps over which the learning rate rises linearly from lr/warmup_steps to lr.'),
    eval_every: z.number().int().min(0).default(10).describe('Measure validation NLL every this many steps, before the update (0: never).'),
    save_every: z.number().int().min(0).default(20).describe('Save a checkpoint every this many steps (0: only the final one).'),
    seed: z.number().int().min(0).max(0xffffffff).default(0).describe('Seed of the shuffles (validation split, batch order per epoch) and of the LoRA initialisation.'),
    max_length: positiveInt().optional().describe('Tokens per chat at most; longer chats are cut at the end (the run reports how many).'),
    ttl_seconds: positiveInt().optional().describe('Checkpoints other than the final one expire after this many seconds.'),
  })
  .superRefine((s, ctx) => {
    if (s.base_url !== undefined && s.backend !== 'custom')
      ctx.addIssue({ code: 'custom', path: ['base_url'], message: `only used with backend "custom" (backend is "${s.backend}")` });
    if (s.warmup_steps > 0 && s.max_steps !== undefined && s.warmup_steps >= s.max_steps)
      ctx.addIssue({ code: 'custom', path: ['warmup_steps'], message: `must be below max_steps (${s.max_steps})` });
  })
  .describe('An SFT run on Tinker Studio: model, chats and hyper-parameters.');

export type SftSpec = z.output<typeof SftSpec>;
export type SftSpecInput = z.input<typeof SftSpec>;
export type ResolvedSftSpec = SftSpec & { name: string };

export interface LoadedSftSpec {
  file: string;
  dir: string;
  spec: ResolvedSftSpec;
}

/** The JSON schema contributed for `*.sft.json` (draft-07). */
export function sftSpecJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(SftSpec, {
    target: 'draft-07',
    io: 'input',
    override: ({ zodSchema, jsonSchema }) => {
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (zodSchema === SftDatasetSpec) jsonSchema.oneOf = [{ required: ['path'] }, { required: ['hf'] }];
      if (zodSchema === ValidationSpec) jsonSchema.oneOf = [{ required: ['path'] }, { required: ['fraction'] }];
    },
  });
}

export function isSftSpecFile(file: string): boolean {
  return /\.sft\.json$/i.test(file);
}

export function defaultSftRunName(file: string): string {
  const base = path.basename(file).replace(/\.sft\.json$/i, '').replace(/\.json$/i, '');
  const cleaned = base.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.]+/, '');
  return cleaned === '' ? 'sft' : cleaned;
}

/** Parses and validates spec text; throws RunSpecError naming `fileLabel` and the field. */
export function parseSftSpecText(text: string, fileLabel: string): SftSpec {
  return validateSftSpec(parseJsonWithPosition(text, fileLabel), fileLabel);
}

function validateSftSpec(value: unknown, fileLabel: string): SftSpec {
  const result = SftSpec.safeParse(value, { reportInput: true });
  if (!result.success) throw new RunSpecError(result.error.issues.map((i) => `${fileLabel}: ${formatIssue(i, SftSpec)}`));
  return result.data;
}

export function resolveSftSpec(spec: SftSpec, specFile: string): ResolvedSftSpec {
  const dir = path.dirname(path.resolve(specFile));
  const at = (p: string) => path.resolve(dir, p);
  const v = spec.dataset.validation;
  return {
    ...spec,
    name: spec.name ?? defaultSftRunName(specFile),
    dataset: {
      ...spec.dataset,
      ...(spec.dataset.path !== undefined ? { path: at(spec.dataset.path) } : {}),
      ...(v?.path !== undefined ? { validation: { ...v, path: at(v.path) } } : {}),
    },
  };
}

/** Reads a spec file, validates it, names it and resolves its paths; checks the files it names exist. */
export async function parseSftSpecFile(file: string): Promise<LoadedSftSpec> {
  const abs = path.resolve(file);
  const text = await readSpecText(abs);
  return loadSftSpec(parseSftSpecText(text, path.basename(abs)), abs);
}

/** Validates a spec given as a value (an agent's overrides on a file's JSON), as if it were `specFile`. */
export async function parseSftSpecValue(value: unknown, specFile: string): Promise<LoadedSftSpec> {
  return loadSftSpec(validateSftSpec(value, path.basename(specFile)), path.resolve(specFile));
}

async function loadSftSpec(raw: SftSpec, abs: string): Promise<LoadedSftSpec> {
  const spec = resolveSftSpec(raw, abs);
  await checkSpecFiles(abs, [
    ['dataset.path', raw.dataset.path, spec.dataset.path],
    ['dataset.validation.path', raw.dataset.validation?.path, spec.dataset.validation?.path],
  ]);
  return { file: abs, dir: path.dirname(abs), spec };
}

/** The spec stored in a run's config.json (its spec keys only). */
export function sftSpecFromConfig(config: unknown, file: string): ResolvedSftSpec {
  if (typeof config !== 'object' || config === null) throw new Error(`${file}: not a JSON object`);
  const keys = Object.keys(SftSpec.shape);
  const picked = Object.fromEntries(Object.entries(config).filter(([k]) => keys.includes(k)));
  const r = SftSpec.safeParse(picked);
  if (!r.success) throw new Error(`${file}: the stored SFT spec is not valid: ${r.error.issues.map((i) => formatIssue(i, SftSpec)).join('; ')}`);
  if (!r.data.name) throw new Error(`${file}: the stored spec has no name`);
  return { ...r.data, name: r.data.name };
}
