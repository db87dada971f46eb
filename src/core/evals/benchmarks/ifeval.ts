// IFEval as the cookbook runs it: google/IFEval's 541 prompts sent as they are (no template, no
// system prompt), each graded by the cookbook's own verifier of its instructions (ifeval/). A prompt is
// correct when every instruction is met (strict accuracy); its score is the share met, so the mean
// score over prompts is the cookbook's "loose" accuracy, not Google's loose variant (docs/benchmarks.md).
import * as z from 'zod';
import { formatIssue } from '../../spec/issues';
import type { BenchmarkDefinition, BenchmarkGrade, BenchmarkProblem } from './contract';
import { verifyAllInstructions } from './ifeval/instructions';
import { instructionKwargs } from './ifeval/pyKwargs';

/** A row as the hub serves it (kwargs: one struct per instruction, unused fields null). */
const IfevalRow = z.object({
  key: z.union([z.number().int(), z.string().min(1)]),
  prompt: z.string(),
  instruction_id_list: z.array(z.string()),
  kwargs: z.array(z.unknown()),
});

/** What grading a prompt needs: its instruction ids, and their kwargs as the cookbook reads them. */
export const IfevalAnswer = z.object({
  instruction_id_list: z.array(z.string()),
  kwargs: z.array(z.unknown()),
});
export type IfevalAnswer = z.infer<typeof IfevalAnswer>;

function toProblem(row: Record<string, unknown>, index: number): BenchmarkProblem {
  const parsed = IfevalRow.safeParse(row, { reportInput: true });
  if (!parsed.success) throw new Error(`ifeval: row ${index}: ${formatIssue(parsed.error.issues[0]!)}`);
  const { key, prompt, instruction_id_list } = parsed.data;
  let kwargs: unknown[];
  try {
    kwargs = instructionKwargs(parsed.data.kwargs, instruction_id_list.length);
  } catch (e) {
    throw new Error(`ifeval: row ${index}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const answer: IfevalAnswer = { instruction_id_list, kwargs };
  return { id: String(key), prompt, answer };
}

/** correct = every instruction met; score = the share met; extracted names the instructions missed. */
export function gradeIfeval(response: string, problem: BenchmarkProblem): BenchmarkGrade {
  const answer = IfevalAnswer.safeParse(problem.answer, { reportInput: true });
  if (!answer.success) throw new Error(`ifeval: problem ${problem.id}: its answer is not an instruction list: ${formatIssue(answer.error.issues[0]!)}`);
  const { fraction, results } = verifyAllInstructions(response, answer.data.instruction_id_list, answer.data.kwargs);
  const missed = results.filter(([, met]) => !met).map(([id]) => id);
  const met = results.length - missed.length;
  return {
    correct: fraction === 1,
    score: fraction,
    extracted: `${met}/${results.length} instructions met${missed.length ? `; missed ${missed.join(', ')}` : ''}`,
  };
}

/** The cookbook's two IFEval figures over graded prompts: strict (all met) and loose (mean share met). */
export function ifevalAccuracy(grades: readonly BenchmarkGrade[]): { strict_accuracy: number; loose_accuracy: number } {
  if (grades.length === 0) return { strict_accuracy: 0, loose_accuracy: 0 };
  return {
    strict_accuracy: grades.filter((g) => g.correct).length / grades.length,
    loose_accuracy: grades.reduce((s, g) => s + g.score, 0) / grades.length,
  };
}

export const ifeval: BenchmarkDefinition = {
  name: 'ifeval',
  title: 'IFEval (train, 541 prompts)',
  // main's newest commit when pinned (its data file: ifeval_input_data.jsonl, 541 rows)
  source: { repo: 'google/IFEval', split: 'train', revision: '966cd89545d6b6acfd7638bc708b98261ca58e84' },
  // the cookbook's BenchmarkConfig defaults; IFEval sets none of its own
  defaults: { temperature: 0.6, max_tokens: 32768, n: 1 },
  toProblem,
  grade: gradeIfeval,
};
