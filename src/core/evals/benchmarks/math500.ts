// MATH-500 (HuggingFaceH4/MATH-500, test: 500 problems): the problem with the cookbook's "Put your
// final answer in \boxed{}." appended, the reference being the last \boxed{} of the row's solution,
// graded by MATH's normalisation and equivalence (mathAnswers.ts).
import { DatasetError } from '../../data/problem';
import type { BenchmarkDefinition } from './contract';
import { lastBoxed, mathAnswersEqual } from './mathAnswers';
import { BOXED_SYSTEM_PROMPT, COOKBOOK_SAMPLING, rowString } from './rows';

export const math500: BenchmarkDefinition = {
  name: 'math500',
  title: 'MATH-500 (test, 500 problems)',
  source: { repo: 'HuggingFaceH4/MATH-500', split: 'test' },
  defaults: { ...COOKBOOK_SAMPLING, system_prompt: BOXED_SYSTEM_PROMPT },
  toProblem(row, index) {
    const where = `HuggingFaceH4/MATH-500 test:${index}`;
    const problem = rowString(row, 'problem', where);
    const answer = lastBoxed(rowString(row, 'solution', where));
    if (answer === undefined) throw new DatasetError(`${where}: field "solution" has no \\boxed{} answer`);
    const id = typeof row.unique_id === 'string' && row.unique_id ? row.unique_id : `test-${index}`;
    return { id, prompt: `${problem} Put your final answer in \\boxed{}.`, answer };
  },
  grade(response, problem) {
    const given = lastBoxed(response);
    const correct = given !== undefined && mathAnswersEqual(given, String(problem.answer));
    return { correct, score: correct ? 1 : 0, extracted: given ?? '' };
  },
};
