// Public benchmarks as eval specs (`"benchmark": "gsm8k"` in a *.eval.json instead of a dataset and a
// grader): what one benchmark is — where its rows come from, how a row becomes a problem, the
// cookbook's sampling defaults, and its grader. Graders are pure functions of (response, problem):
// no sampling, no I/O, so the goldens made from the cookbook's Python graders check them directly.

export const BENCHMARK_NAMES = ['gsm8k', 'math500', 'ifeval', 'aime_2025', 'mmlu_redux'] as const;
export type BenchmarkName = (typeof BENCHMARK_NAMES)[number];

/** Where a benchmark's rows are on the Hugging Face hub (read through src/core/data/hf.ts's loader, or its Parquet files). */
export interface BenchmarkSource {
  repo: string;
  config?: string;
  split: string;
  /** a pinned revision (commit) where the hub gives one */
  revision?: string;
  /** several configs read one after another (MMLU-Redux's subjects) */
  configs?: readonly string[];
}

/** One problem of a benchmark: the user's message (the prompt template applied), and what the grader needs. */
export interface BenchmarkProblem {
  /** stable across loads: the row's own id where it has one, else `<split>-<index>` */
  id: string;
  /** the user message, the benchmark's instruction (answer format) included */
  prompt: string;
  /** the reference answer as the grader reads it (a number's text, a LaTeX answer, a letter, IFEval's instruction list) */
  answer: unknown;
}

/** A graded response. `score` is in [0, 1]: 1/0 for exact-answer benchmarks, IFEval's fraction of instructions met. */
export interface BenchmarkGrade {
  correct: boolean;
  score: number;
  /** what the grader read as the answer (for the eval panel's rows), when it reads one */
  extracted?: string;
}

/** The cookbook's defaults per benchmark; every one is overridable by the eval spec's own fields. */
export interface BenchmarkDefaults {
  temperature: number;
  max_tokens: number;
  n: number;
  system_prompt?: string;
}

export interface BenchmarkDefinition {
  name: BenchmarkName;
  /** shown in the editor and the eval panel: "GSM8K (test, 1,319 problems)" */
  title: string;
  source: BenchmarkSource;
  defaults: BenchmarkDefaults;
  /** a row of the dataset as the hub serves it → a problem; throws with the field named when the row does not fit; `config` is the row's config when the source reads several */
  toProblem(row: Record<string, unknown>, index: number, config?: string): BenchmarkProblem;
  /** rows the benchmark leaves out (MMLU-Redux keeps only questions marked "ok"); default: every row */
  keep?(row: Record<string, unknown>): boolean;
  grade(response: string, problem: BenchmarkProblem): BenchmarkGrade;
}
