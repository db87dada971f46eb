// AIME 2025 (MathArena/aime_2025, its one split "train": 30 problems, integer answers 0–999): the
// cookbook's AIME instruction appended; graded by the integer in the first \boxed{} (else GSM8K's
// final number).
import { DatasetError } from '../../data/problem';
import { firstBoxed, gsm8kAnswer, numberIn, pythonFloat } from './answers';
import type { BenchmarkDefinition, BenchmarkGrade } from './contract';
import { BOXED_SYSTEM_PROMPT, COOKBOOK_SAMPLING, rowString } from './rows';

export const AIME_INSTRUCTION = 'This is an AIME problem. The answer is an integer from 000 to 999. Show your work step by step, then put your final answer in \\boxed{}.';

/** AIME's grade: the answer read as a number, truncated to an integer, equal to the reference. */
export function gradeAime(response: string, expected: number): BenchmarkGrade {
  const boxed = firstBoxed(response);
  const text = boxed ? numberIn(boxed) : gsm8kAnswer(response);
  const x = pythonFloat(text);
  if (x === undefined || !Number.isFinite(x)) return { correct: false, score: 0, extracted: text };
  const value = Math.trunc(x);
  const correct = value === expected;
  return { correct, score: correct ? 1 : 0, extracted: String(value) };
}

export const aime_2025: BenchmarkDefinition = {
  name: 'aime_2025',
  title: 'AIME 2025 (30 problems)',
  source: { repo: 'MathArena/aime_2025', split: 'train' },
  defaults: { ...COOKBOOK_SAMPLING, system_prompt: BOXED_SYSTEM_PROMPT },
  toProblem(row, index) {
    const where = `MathArena/aime_2025 train:${index}`;
    const problem = rowString(row, 'problem', where);
    const raw = row.answer;
    const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : '';
    const answer = /^[+-]?\d+$/.test(text) ? Number(text) : Number(/\d+/.exec(text)?.[0] ?? NaN);
    if (!Number.isInteger(answer)) throw new DatasetError(`${where}: field "answer" must be an integer (got ${JSON.stringify(raw)})`);
    const id = typeof row.problem_idx === 'number' || typeof row.problem_idx === 'string' ? `problem-${row.problem_idx}` : `train-${index}`;
    return { id, prompt: `${problem}\n\n${AIME_INSTRUCTION}`, answer };
  },
  grade(response, problem) {
    return gradeAime(response, Number(problem.answer));
  },
};
