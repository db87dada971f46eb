// GSM8K (openai/gsm8k, config "main", test split: 1,319 problems): the question as the user message,
// the cookbook's boxed-answer system prompt, graded by the final number (answers.ts).
import { gsm8kAnswer, gsm8kCorrect } from './answers';
import type { BenchmarkDefinition } from './contract';
import { BOXED_SYSTEM_PROMPT, COOKBOOK_SAMPLING, rowString } from './rows';

export const gsm8k: BenchmarkDefinition = {
  name: 'gsm8k',
  title: 'GSM8K (test, 1,319 problems)',
  source: { repo: 'openai/gsm8k', config: 'main', split: 'test' },
  defaults: { ...COOKBOOK_SAMPLING, system_prompt: BOXED_SYSTEM_PROMPT },
  toProblem(row, index) {
    const where = `openai/gsm8k test:${index}`;
    const question = rowString(row, 'question', where);
    const answer = rowString(row, 'answer', where).split('####').pop()!.trim();
    return { id: `test-${index}`, prompt: question, answer };
  },
  grade(response, problem) {
    const extracted = gsm8kAnswer(response);
    const correct = gsm8kCorrect(extracted, String(problem.answer));
    return { correct, score: correct ? 1 : 0, extracted };
  },
};
