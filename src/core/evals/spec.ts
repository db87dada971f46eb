// Evaluation specs (`*.eval.json`): a dataset, a grader (a reward file run by the SAME runner and
// limits as training) or an environment (`env`, a GRPO spec's env schema plus correct_threshold: each
// sample is an episode graded by its total reward), sampling fields at the top level as in GRPO specs,
// and the targets to score. With `benchmark` instead of a dataset and a grader, the problems and the
// grader are a public benchmark's (benchmarks/), its defaults under the spec's own fields. With `nll` instead (nllSpec.ts), the eval measures the NLL of held-out
// chats through forward passes: nothing is sampled, so the sampling fields are refused.
// Read with the spec layer's text helpers: JSON errors at line and column, problems worded
// `<file>: <field>: <what is wrong>`, relative paths resolved against the spec's folder.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import { datasetSource, onInvalidLine, oneSource, positiveInt } from '../spec/fields';
import { specJsonSchema } from '../spec/define';
import { formatIssue } from '../spec/issues';
import { parseJsonWithPosition, readSpecText, RunSpecError } from '../spec/text';
import { REWARD_FILE_EXTENSIONS as REWARD_EXTENSIONS } from '../reward/files';
import { EnvSpec } from '../env/spec';
import { isEnvFile } from '../env/files';
import { NLL_REFUSED_FIELDS, NllSpec, nllRefusal } from './nllSpec';
import { BENCHMARK_NAMES, type BenchmarkName } from './benchmarks/contract';
import { availableBenchmarks, benchmarkDefinition } from './benchmarks/registry';

export const EVAL_EXTENSION = '.eval.json';

const seed = () => z.number().int().min(0).max(0xffffffff);

export const EvalDatasetSpec = oneSource(
  z.strictObject({
    ...datasetSource('problems'),
    prompt_field: z.string().min(1).default('question').describe('Field holding the question (a string) or a chat list [{role, content}, …]; a line without it may give `messages`.'),
    ground_truth_field: z.string().min(1).default('answer').describe('Field holding the ground truth passed to the grader.'),
    system_prompt: z.string().optional().describe('System message put before every question.'),
    max_problems: positiveInt().optional().describe('Evaluate at most this many problems: the dataset is shuffled with seed 0 first (the same order on every run, for every target), then the first ones of that order are taken.'),
    on_invalid_line: onInvalidLine('problem'),
  }),
).describe('The problems: `path` (JSONL) or `hf` (a Hugging Face dataset), with the same fields as a GRPO dataset.');
export type EvalDatasetSpec = z.output<typeof EvalDatasetSpec>;

const correctThreshold = () => z.number().default(0.5).describe('A sample is correct when its reward is at least this (pass@k).');

export const GraderSpec = z
  .strictObject({
    file: z
      .string()
      .min(1)
      .refine((f) => (REWARD_EXTENSIONS as readonly string[]).includes(path.extname(f).toLowerCase()), { message: `must be a ${REWARD_EXTENSIONS.join(', ')} file` })
      .refine((f) => !isEnvFile(f), { message: 'is an environment file: give it as "env": {"file": …} instead of "grader"' })
      .describe('Reward file, relative to the spec file (the same runner and limits as training).'),
    correct_threshold: correctThreshold(),
    timeout_ms: positiveInt().default(10_000).describe('Per-call time limit; a call over it scores 0.'),
    workers: positiveInt().optional().describe('Parallel grader workers (default: 2).'),
  })
  .describe('The grader.');

/** Grading with an environment: a GRPO spec's `env` (one schema), a sample being one episode scored by its total reward. */
export const EvalEnvSpec = EnvSpec.extend({
  correct_threshold: correctThreshold().describe("A sample (an episode) is correct when its total reward (the sum of its step rewards plus its group reward) is at least this (pass@k)."),
}).describe("An environment instead of a grader: each sample is one episode (initial_observation, the model's reply, step, … until the episode ends), graded by its total reward, as in training.");
export type EvalEnvSpec = z.output<typeof EvalEnvSpec>;

const RunTarget = z.strictObject({
  run: z.string().min(1).describe('A run directory (relative to the spec file) or "latest": the newest run next to the spec.'),
  checkpoints: z
    .union([z.literal('all'), z.literal('best'), z.array(z.string().min(1)).min(1)])
    .default('all')
    .describe('"all" sampler checkpoints, "best" (the one at the best holdout reward), or a list of checkpoint names.'),
});
export const EvalTarget = z.union([
  z.string().min(1).describe('A base model name or a tinker:// sampler path.'),
  RunTarget,
]);
export type EvalTarget = z.output<typeof EvalTarget>;

export const EvalSpecSchema = z
  .strictObject({
    $schema: z.string().optional().describe('JSON schema of this file.'),
    name: z.string().regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/, { message: 'must be letters, digits, ".", "_" or "-"' }).optional().describe('Eval name; default: the file name without .eval.json.'),
    dataset: EvalDatasetSpec.optional(),
    nll: NllSpec.optional(),
    benchmark: z.enum(BENCHMARK_NAMES).optional().describe('A public benchmark instead of a dataset and a grader: its problems (from the Hugging Face hub, cached), its prompt and its grader, as the cookbook runs it; n, temperature, max_tokens and system_prompt override its defaults.'),
    max_problems: positiveInt().optional().describe('With "benchmark": evaluate at most this many problems, a subset shuffled with seed 0 (the same problems on every run, for every target).'),
    system_prompt: z.string().optional().describe("With \"benchmark\": the system message (default: the benchmark's, e.g. the math benchmarks' \"Put your final answer in \\boxed{}.\"; \"\" for none)."),
    grader: GraderSpec.optional(),
    env: EvalEnvSpec.optional(),
    // defaults filled by parseEvalSpecValue, so that an NLL eval can tell a field given from a default
    n: positiveInt().optional().meta({ default: 1 }).describe('Samples per problem.'),
    temperature: z.number().min(0).optional().meta({ default: 1 }).describe('Sampling temperature (0 = greedy).'),
    top_p: z.number().gt(0).max(1).optional().describe('Nucleus sampling.'),
    top_k: z.number().int().optional().describe('Top-k sampling (-1: off).'),
    max_tokens: positiveInt().optional().describe('Most tokens sampled per completion (required unless "nll").'),
    stop: z.array(z.string().min(1)).optional().describe("Stop strings (default: the renderer's)."),
    seed: seed().optional().describe('Each sample is seeded from this, the target, the problem and the sample index: a resumed eval equals an uninterrupted one.'),
    renderer: z.string().min(1).optional().describe('Chat renderer; default: from the model.'),
    backend: z.enum(['local', 'cloud', 'custom']).default('local').describe('Where sampling runs.'),
    base_url: z.string().regex(/^https?:\/\/\S+$/, { message: 'must be an http:// or https:// URL' }).optional().describe('Server URL for backend "custom".'),
    model: z.string().min(1).optional().describe('Base model of tinker:// targets (default: the first base-model target).'),
    targets: z.array(EvalTarget).min(1).describe('What to evaluate: base model names, tinker:// sampler paths, or {"run", "checkpoints"}.'),
    baseline: EvalTarget.optional().describe('The target the others are compared with (default: the first).'),
    concurrency: positiveInt().default(16).describe('Sampling requests in flight, all targets together.'),
  })
  .superRefine((s, ctx) => {
    if (s.base_url !== undefined && s.backend !== 'custom') ctx.addIssue({ code: 'custom', path: ['base_url'], message: 'only used with backend "custom"' });
    if (s.nll !== undefined) {
      for (const f of NLL_REFUSED_FIELDS) if (s[f] !== undefined) ctx.addIssue({ code: 'custom', path: [f], message: nllRefusal(f) });
      return;
    }
    if (s.benchmark !== undefined) {
      const instead = { dataset: 'the benchmark brings its problems', grader: 'the benchmark grades its own answers', env: 'the benchmark grades its own answers' } as const;
      for (const f of ['dataset', 'grader', 'env'] as const) if (s[f] !== undefined) ctx.addIssue({ code: 'custom', path: [f], message: `not with "benchmark" (${instead[f]}): remove "${f}", or remove "benchmark" to grade your own data` });
      if (!(availableBenchmarks() as string[]).includes(s.benchmark)) ctx.addIssue({ code: 'custom', path: ['benchmark'], message: `"${s.benchmark}" is not available in this build (available: ${availableBenchmarks().join(', ')})` });
      return;
    }
    for (const f of ['max_problems', 'system_prompt'] as const)
      if (s[f] !== undefined) ctx.addIssue({ code: 'custom', path: [f], message: `only with "benchmark"${f === 'max_problems' ? ' (with a dataset, give dataset.max_problems)' : ' (with a dataset, give dataset.system_prompt)'}` });
    if (s.grader !== undefined && s.env !== undefined) ctx.addIssue({ code: 'custom', path: ['env'], message: 'give "grader" or "env", not both (an environment grades its own episodes)' });
    if (s.grader === undefined && s.env === undefined) ctx.addIssue({ code: 'custom', path: ['grader'], message: 'required: a reward file to grade with, or an environment ("env") instead (or "nll": the NLL of held-out chats)' });
    if (s.dataset === undefined) ctx.addIssue({ code: 'custom', path: ['dataset'], message: 'required: the problems to sample (or "nll": {"dataset": …} to score held-out chats)' });
    if (s.max_tokens === undefined) ctx.addIssue({ code: 'custom', path: ['max_tokens'], message: 'required: the most tokens sampled per completion' });
  })
  // the editor says the same: an NLL eval takes none of the sampling fields, any other eval needs its problems and max_tokens
  .meta({
    if: { required: ['nll'] },
    then: { properties: Object.fromEntries(NLL_REFUSED_FIELDS.map((f) => [f, false])) },
    else: { if: { required: ['benchmark'] }, then: { properties: { dataset: false, grader: false, env: false } }, else: { required: ['dataset', 'max_tokens'] } },
  })
  .describe('An evaluation on Tinker Studio: score models and checkpoints on a dataset.');
/** A read spec: its name and the sampling defaults filled in (n = 1, temperature = 1; an NLL eval has n = 1). */
export type EvalSpec = Omit<z.output<typeof EvalSpecSchema>, 'n' | 'temperature'> & { name: string; n: number; temperature: number };

export interface LoadedEvalSpec {
  file: string;
  dir: string;
  spec: EvalSpec;
}

/** The eval's name from its file: `holdout.eval.json` → `holdout`. */
export function evalNameOf(file: string): string {
  const base = path.basename(file);
  const stem = base.toLowerCase().endsWith(EVAL_EXTENSION) ? base.slice(0, -EVAL_EXTENSION.length) : base.replace(/\.json$/i, '');
  return stem || 'eval';
}

export function parseEvalSpecValue(value: unknown, file: string): LoadedEvalSpec {
  const abs = path.resolve(file);
  const label = path.basename(abs);
  const r = EvalSpecSchema.safeParse(value, { reportInput: true });
  if (!r.success) throw new RunSpecError(r.error.issues.map((i) => `${label}: ${formatIssue(i, EvalSpecSchema)}`));
  const dir = path.dirname(abs);
  const s = r.data;
  // a benchmark's defaults (the cookbook's) under the spec's own fields
  const d = s.benchmark !== undefined ? benchmarkDefinition(s.benchmark).defaults : undefined;
  const spec: EvalSpec = {
    ...s,
    name: s.name ?? evalNameOf(abs),
    n: s.n ?? d?.n ?? 1,
    temperature: s.temperature ?? d?.temperature ?? 1,
    ...(d ? { max_tokens: s.max_tokens ?? d.max_tokens } : {}),
    ...(d && s.system_prompt === undefined && d.system_prompt !== undefined ? { system_prompt: d.system_prompt } : {}),
    ...(s.dataset ? { dataset: { ...s.dataset, ...(s.dataset.path ? { path: path.resolve(dir, s.dataset.path) } : {}) } } : {}),
    ...(s.nll ? { nll: { ...s.nll, dataset: { ...s.nll.dataset, ...(s.nll.dataset.path ? { path: path.resolve(dir, s.nll.dataset.path) } : {}) } } } : {}),
    ...(s.grader ? { grader: { ...s.grader, file: path.resolve(dir, s.grader.file) } } : {}),
    ...(s.env ? { env: { ...s.env, file: path.resolve(dir, s.env.file) } } : {}),
  };
  return { file: abs, dir, spec };
}

/** Reads and validates an eval spec file; checks the dataset and grader files exist. */
export async function parseEvalSpecFile(file: string): Promise<LoadedEvalSpec> {
  const abs = path.resolve(file);
  const text = await readSpecText(abs);
  const loaded = parseEvalSpecValue(parseJsonWithPosition(text, path.basename(abs)), abs);
  const missing: string[] = [];
  for (const [field, p] of [['dataset.path', loaded.spec.dataset?.path], ['nll.dataset.path', loaded.spec.nll?.dataset.path], ['grader.file', loaded.spec.grader?.file], ['env.file', loaded.spec.env?.file]] as const) {
    if (p === undefined) continue;
    try {
      await fs.access(p);
    } catch {
      missing.push(`${path.basename(abs)}: ${field}: ${p} does not exist`);
    }
  }
  if (missing.length) throw new RunSpecError(missing);
  return loaded;
}

/** What grades an eval's samples: its reward file, its environment or its benchmark (exactly one, the schema's rule; an NLL eval has none). */
export function evalGrading(
  spec: Pick<EvalSpec, 'grader' | 'env' | 'benchmark'>,
): { kind: 'reward'; grader: z.output<typeof GraderSpec> } | { kind: 'env'; env: EvalEnvSpec } | { kind: 'benchmark'; benchmark: BenchmarkName } {
  if (spec.benchmark) return { kind: 'benchmark', benchmark: spec.benchmark };
  if (spec.env) return { kind: 'env', env: spec.env };
  if (spec.grader) return { kind: 'reward', grader: spec.grader };
  throw new Error('the eval spec has neither a grader nor an env (an NLL eval grades nothing)');
}

/** The reward at or above which an eval's sample is correct (pass@k). */
export function evalCorrectThreshold(spec: Pick<EvalSpec, 'grader' | 'env' | 'benchmark'>): number {
  const g = evalGrading(spec);
  // a benchmark's sample is correct when its grade's score is 1 (all of IFEval's instructions met)
  return g.kind === 'benchmark' ? 1 : g.kind === 'env' ? g.env.correct_threshold : g.grader.correct_threshold;
}

/** The file that grades an eval: the reward file, or the environment file; undefined for a benchmark (graded in TypeScript). */
export function evalGraderFile(spec: Pick<EvalSpec, 'grader' | 'env' | 'benchmark'>): string | undefined {
  const g = evalGrading(spec);
  return g.kind === 'benchmark' ? undefined : g.kind === 'env' ? g.env.file : g.grader.file;
}

/** The JSON schema contributed for `*.eval.json`. */
export function evalSpecJsonSchema(): Record<string, unknown> {
  return specJsonSchema(EvalSpecSchema);
}
