// "Run Benchmark on Checkpoint…": one benchmark as an eval spec, or a template by use case written as a
// suite file (src/core/suite/contract.ts) whose public benchmarks are the `benchmark` layer and whose
// product layer is the user's own data (or tool environment), left as a placeholder eval to fill in.
import { BENCHMARK_NAMES, type BenchmarkName } from './contract';

/** What the editor's pickers show for each benchmark. */
export const BENCHMARK_LABELS: Record<BenchmarkName, { label: string; what: string }> = {
  gsm8k: { label: 'GSM8K', what: 'grade-school math, the final number' },
  math500: { label: 'MATH-500', what: 'competition math, the boxed answer' },
  ifeval: { label: 'IFEval', what: 'verifiable instructions (strict and loose accuracy)' },
  aime_2025: { label: 'AIME 2025', what: 'olympiad math, an integer answer' },
  mmlu_redux: { label: 'MMLU-Redux', what: 'multi-subject knowledge, a letter answer' },
};

export function isBenchmarkName(s: unknown): s is BenchmarkName {
  return typeof s === 'string' && (BENCHMARK_NAMES as readonly string[]).includes(s);
}

export type BenchmarkTemplateId = 'chat' | 'math' | 'tools';

export interface BenchmarkTemplate {
  id: BenchmarkTemplateId;
  label: string;
  detail: string;
  benchmarks: readonly BenchmarkName[];
  /** the product layer's placeholder: the user's data graded by a reward file, or the user's tool environment */
  product: 'data' | 'env';
}

export const BENCHMARK_TEMPLATES: readonly BenchmarkTemplate[] = [
  { id: 'chat', label: 'General chat assistant', detail: 'IFEval, MMLU-Redux, GSM8K, plus your product data', benchmarks: ['ifeval', 'mmlu_redux', 'gsm8k'], product: 'data' },
  { id: 'math', label: 'Math / reasoning', detail: 'GSM8K, MATH-500, AIME 2025', benchmarks: ['gsm8k', 'math500', 'aime_2025'], product: 'data' },
  { id: 'tools', label: 'Tool-using assistant', detail: 'your tool environment as the product layer, plus IFEval', benchmarks: ['ifeval'], product: 'env' },
];

export function benchmarkTemplate(id: string): BenchmarkTemplate | undefined {
  return BENCHMARK_TEMPLATES.find((t) => t.id === id);
}

/** The sampling of a benchmark eval: the benchmark's own defaults unless given. */
export interface BenchmarkRunChoice {
  /** a seeded subset of this many problems (all when absent) */
  max_problems?: number;
  backend: 'local' | 'cloud' | 'custom';
  base_url?: string;
  /** samples per problem (default: the benchmark's) */
  n?: number;
}

/** A `*.eval.json` of one benchmark on these targets (sampler paths or base models; the first is the baseline). */
export function benchmarkEvalSpec(benchmark: BenchmarkName, targets: readonly string[], c: BenchmarkRunChoice): Record<string, unknown> {
  return {
    benchmark,
    ...(c.max_problems !== undefined ? { max_problems: c.max_problems } : {}),
    ...(c.n !== undefined ? { n: c.n } : {}),
    seed: 0,
    backend: c.backend,
    ...(c.base_url !== undefined ? { base_url: c.base_url } : {}),
    targets: [...targets],
  };
}

/** A file a template writes next to the suite, for the user to fill in (never overwritten when it exists). */
export interface PlaceholderFile {
  /** relative to the suite's folder */
  file: string;
  value: Record<string, unknown>;
}

/** `<template>-benchmarks.suite.json`, and the product eval placeholder unless the user gave their own eval spec. */
export function templateSuite(t: BenchmarkTemplate, c: BenchmarkRunChoice & { productEval?: string }): { suiteFile: string; suite: Record<string, unknown>; placeholders: PlaceholderFile[] } {
  // a suite's inline evals get the checkpoint as their target, so they name none
  const entries: Array<Record<string, unknown>> = t.benchmarks.map((b) => {
    const { targets: _t, ...spec } = benchmarkEvalSpec(b, [], c);
    return { name: b, layer: 'benchmark', eval: spec };
  });
  const placeholders: PlaceholderFile[] = [];
  let productEval = c.productEval;
  if (productEval === undefined) {
    productEval = `${t.id}-product.eval.json`;
    const sampling = { n: 1, temperature: 0.6, max_tokens: 1024, seed: 0, backend: c.backend, ...(c.base_url !== undefined ? { base_url: c.base_url } : {}), targets: ['(the suite checkpoint)'] };
    placeholders.push({
      file: productEval,
      value:
        t.product === 'env'
          ? // an environment grades its own episodes: the tasks it is built from, one JSON object a line
            { dataset: { path: 'product-tasks.jsonl' }, env: { file: 'product.env.py' }, ...sampling }
          : { dataset: { path: 'product.jsonl', prompt_field: 'question', ground_truth_field: 'answer' }, grader: { file: 'product_grader.py' }, ...sampling },
    });
  }
  entries.push({ name: 'product', layer: 'product', eval: productEval });
  return { suiteFile: `${t.id}-benchmarks.suite.json`, suite: { name: `${t.id}-benchmarks`, entries }, placeholders };
}
