// Inline evaluators of GRPO and SFT specs (`evals: [...]`), the cookbook's evaluator_builders and
// infrequent_evaluator_builders: each scores the run's current weights every `every` steps, before
// that step's update (as the holdout does), and logs under its name with the holdout's key shapes.
// Two kinds:
//   "sampling": the dataset's problems are sampled `n` times with the run's sampler of that step and
//     graded by a reward file (GRPO: the run's own by default) → test/<name>/env/all/reward/total,
//     …/pass@1 … pass@<n>;
//   "nll" (SFT only): the token-weighted NLL of a chat file, forward only → test/<name>/nll.
// The kind is inferred when left out: an SFT entry without a grader is "nll", every other entry is
// "sampling". `dataset` is an eval spec's dataset (one schema: EvalDatasetSpec); a `benchmark` instead
// brings its own problems and grader (a seeded subset of max_problems of them, the same at every step).
import * as z from 'zod';
import { positiveInt } from '../spec/fields';
import { BENCHMARK_NAMES } from './benchmarks/contract';
import { EvalDatasetSpec, GraderSpec } from './spec';
import { INLINE_EVAL_KEY } from '../../protocol/metricKeys';

/** Names the holdout already uses: its keys test/env/…, test/nll, test/bpb and its files eval_test_*.jsonl. */
export const RESERVED_EVAL_NAMES = ['env', 'nll', 'bpb', 'test'] as const;

export const InlineEvalSpec = z
  .strictObject({
    name: z
      .string()
      .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, { message: 'must be letters, digits, "_", "." or "-" (it is part of metric keys: test/<name>/…)' })
      .max(64)
      .describe('The evaluator\'s name: its metrics are logged as test/<name>/…, its samples as eval_<name>_samples.jsonl ("env", "nll", "bpb" and "test" are the holdout\'s).'),
    kind: z
      .enum(['sampling', 'nll'])
      .optional()
      .describe('"sampling": sample the problems and grade them; "nll" (SFT only): the NLL of a chat file, forward only. Default: "nll" for an SFT entry without a grader, else "sampling".'),
    dataset: EvalDatasetSpec.optional(),
    benchmark: z
      .enum(BENCHMARK_NAMES)
      .optional()
      .describe('A public benchmark instead of dataset + grader: its problems (a seeded subset of max_problems, the same at every step), prompt and grader; charted as test/<name>/… next to the reward.'),
    grader: GraderSpec.optional().describe("The grader (a reward file). Default in GRPO specs: the run's reward file; required for SFT sampling evaluators."),
    every: positiveInt().describe('Evaluate every this many steps (at step 0, every, 2·every, …), before the step\'s update; may be larger than eval_every.'),
    n: positiveInt().default(1).describe('Samples per problem (sampling); pass@1 … pass@n are logged.'),
    max_problems: positiveInt().optional().describe('At most this many problems: the first ones of the dataset shuffled with seed 0 (the same problems at every step); for an NLL evaluator, at most this many chats, the first ones of the file.'),
    temperature: z.number().min(0).optional().describe("Sampling temperature (sampling). Default: 1 as the holdout; a benchmark's own (the cookbook's) for a benchmark."),
    max_tokens: positiveInt().optional().describe("Most tokens sampled per completion (sampling). Default: the run's max_tokens (GRPO); required for SFT sampling evaluators."),
  })
  .superRefine((e, ctx) => {
    if ((RESERVED_EVAL_NAMES as readonly string[]).includes(e.name))
      ctx.addIssue({ code: 'custom', path: ['name'], message: `"${e.name}" is reserved (the holdout's metrics and files use it: ${RESERVED_EVAL_NAMES.join(', ')}); choose another name` });
    if (e.dataset === undefined && e.benchmark === undefined) ctx.addIssue({ code: 'custom', path: ['dataset'], message: 'required: the problems to evaluate (or "benchmark": a public benchmark)' });
    if (e.dataset !== undefined && e.benchmark !== undefined) ctx.addIssue({ code: 'custom', path: ['benchmark'], message: 'give "dataset" or "benchmark", not both (a benchmark brings its problems)' });
    if (e.benchmark !== undefined && e.grader !== undefined) ctx.addIssue({ code: 'custom', path: ['grader'], message: 'not used with a benchmark (it grades its own answers)' });
    if (e.benchmark !== undefined && e.kind === 'nll') ctx.addIssue({ code: 'custom', path: ['kind'], message: 'a benchmark is sampled and graded: "sampling"' });
    if (e.max_problems !== undefined && e.dataset?.max_problems !== undefined)
      ctx.addIssue({ code: 'custom', path: ['max_problems'], message: 'give max_problems here or in dataset, not both' });
    if (e.kind === 'nll') {
      for (const f of ['grader', 'max_tokens'] as const) if (e[f] !== undefined) ctx.addIssue({ code: 'custom', path: [f], message: 'not used by an "nll" evaluator' });
    }
  })
  .describe('An inline evaluator: scores the current weights on a dataset every `every` steps.');
export type InlineEvalSpec = z.output<typeof InlineEvalSpec>;

/**
 * What a kind's runs give their inline evaluators, stated by the kind (its spec module) so that this
 * folder names no kind: whether an "nll" evaluator has chats to score, and the defaults a sampling one has.
 */
export interface InlineEvalRun {
  /** the kind's run, for messages: "an SFT run" (its row's aRun) */
  readonly aRun: string;
  /** the run trains on chats: an entry without a grader is "nll"; otherwise "nll" entries are refused */
  readonly chats: boolean;
  /** the run has a reward file and max_tokens of its own, a sampling entry's defaults; otherwise the entry gives both */
  readonly ownGrader: boolean;
  /** the `evals` field's description in the kind's JSON schema */
  readonly describe: string;
}

/** The `evals` field of a run spec whose runs are `run`: names unique, the kind's own rules. */
export function inlineEvalsField(run: InlineEvalRun) {
  return z
    .array(InlineEvalSpec)
    .superRefine((list, ctx) => {
      const seen = new Map<string, number>();
      list.forEach((e, i) => {
        const first = seen.get(e.name);
        if (first !== undefined) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `"${e.name}" is already the name of evals[${first}]; names must be unique` });
        else seen.set(e.name, i);
        const k = inlineEvalKind(e, run);
        if (!run.chats && k === 'nll') ctx.addIssue({ code: 'custom', path: [i, 'kind'], message: `"nll" evaluators are for SFT specs (${run.aRun} has no chats to score)` });
        if (!run.ownGrader && k === 'sampling' && e.benchmark === undefined) {
          if (e.grader === undefined) ctx.addIssue({ code: 'custom', path: [i, 'grader'], message: `is required for a sampling evaluator of ${run.aRun} (it has no reward file)` });
          if (e.max_tokens === undefined) ctx.addIssue({ code: 'custom', path: [i, 'max_tokens'], message: `is required for a sampling evaluator of ${run.aRun}` });
        }
      });
    })
    .optional()
    .describe(run.describe);
}

/** What an entry is, its `kind` or the inferred one. */
export function inlineEvalKind(e: Pick<InlineEvalSpec, 'kind' | 'grader' | 'benchmark'>, run: Pick<InlineEvalRun, 'chats'>): 'sampling' | 'nll' {
  return e.kind ?? (run.chats && e.grader === undefined && e.benchmark === undefined ? 'nll' : 'sampling');
}

/** The most problems an entry evaluates (its own cap, or its dataset's). */
export function inlineEvalMaxProblems(e: InlineEvalSpec): number | undefined {
  return e.max_problems ?? e.dataset?.max_problems;
}

/** The metric keys of an inline evaluator (the holdout's shapes under test/<name>/). */
export const inlineEvalKeys = INLINE_EVAL_KEY;
