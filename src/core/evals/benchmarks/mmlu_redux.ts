// MMLU-Redux (edinburgh-dawg/mmlu-redux: 30 subjects, one config each, test split, 100 questions
// each): only questions whose error_type is "ok", as the cookbook; lettered choices and the
// cookbook's "Answer with just the letter" instruction; graded by the letter read (answers.ts).
import { DatasetError } from '../../data/problem';
import { choiceLetter } from './answers';
import type { BenchmarkDefinition } from './contract';
import { COOKBOOK_SAMPLING, rowString } from './rows';

export const MMLU_REDUX_SUBJECTS = [
  'anatomy', 'astronomy', 'business_ethics', 'clinical_knowledge', 'college_chemistry', 'college_computer_science', 'college_mathematics',
  'college_medicine', 'college_physics', 'conceptual_physics', 'econometrics', 'electrical_engineering', 'formal_logic', 'global_facts',
  'high_school_chemistry', 'high_school_geography', 'high_school_macroeconomics', 'high_school_mathematics', 'high_school_physics',
  'high_school_statistics', 'high_school_us_history', 'human_aging', 'logical_fallacies', 'machine_learning', 'miscellaneous', 'philosophy',
  'professional_accounting', 'professional_law', 'public_relations', 'virology',
] as const;

/** "(A) first\n(B) second…" */
export function letteredChoices(choices: readonly string[]): string {
  return choices.map((c, i) => `(${String.fromCharCode(65 + i)}) ${c}`).join('\n');
}

export const mmlu_redux: BenchmarkDefinition = {
  name: 'mmlu_redux',
  title: 'MMLU-Redux (30 subjects, questions marked "ok")',
  source: { repo: 'edinburgh-dawg/mmlu-redux', split: 'test', configs: MMLU_REDUX_SUBJECTS },
  defaults: { ...COOKBOOK_SAMPLING },
  keep: (row) => (row.error_type ?? 'ok') === 'ok',
  toProblem(row, index, config) {
    const where = `edinburgh-dawg/mmlu-redux ${config ?? ''} test:${index}`;
    const question = rowString(row, 'question', where);
    const choices = row.choices;
    if (!Array.isArray(choices) || choices.length === 0 || !choices.every((c): c is string => typeof c === 'string'))
      throw new DatasetError(`${where}: field "choices" must be a list of strings`);
    const k = typeof row.answer === 'number' ? row.answer : Number(row.answer);
    if (!Number.isInteger(k) || k < 0 || k >= choices.length) throw new DatasetError(`${where}: field "answer" must be the index of a choice (0–${choices.length - 1}; got ${JSON.stringify(row.answer)})`);
    return {
      id: `${config ?? 'test'}-${index}`,
      prompt: `${question}\n\n${letteredChoices(choices)}\n\nAnswer with just the letter (A, B, C, or D).`,
      answer: String.fromCharCode(65 + k),
    };
  },
  grade(response, problem) {
    const extracted = choiceLetter(response);
    const correct = extracted === problem.answer;
    return { correct, score: correct ? 1 : 0, extracted };
  },
};
