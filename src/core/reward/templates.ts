// The commented starting points "Tinker: New Reward Function" writes: a reward file in Python,
// TypeScript or JavaScript, and its companion examples file.

export type TemplateLanguage = 'python' | 'typescript' | 'javascript';

export const TEMPLATE_EXTENSIONS: Record<TemplateLanguage, string> = { python: '.py', typescript: '.ts', javascript: '.js' };

const PYTHON = `"""A reward function for GRPO training with Tinker Studio.

Tinker Studio calls compute_reward(completion, ground_truth) once per sampled completion:
  completion    the model's reply as text (the stop sequence already removed)
  ground_truth  the dataset's ground-truth field for the problem, as a string
Return a float, by default between 0 and 1. An exception scores 0 and is reported with its
traceback; the run goes on.

Keep it offline and deterministic: the same input must always give the same reward (no network,
no clock, no unseeded randomness). Within GRPO, only groups whose samples get different rewards
teach the model anything.

Examples in reward.examples.jsonl next to this file are run while you type; their results show
above the function and mismatches with "expected" are marked in that file.
"""
import re

# the last integer in the reply is taken as the answer ("1,234" counts as 1234)
_INTEGER = re.compile(r"-?\\d+")


def compute_reward(completion: str, ground_truth: str) -> float:
    numbers = _INTEGER.findall(completion.replace(",", ""))
    if not numbers:
        return 0.0  # no answer at all
    return 1.0 if numbers[-1] == ground_truth.strip() else 0.0
`;

const TYPESCRIPT = `// A reward function for GRPO training with Tinker Studio.
//
// Tinker Studio calls computeReward(completion, groundTruth) once per sampled completion:
//   completion   the model's reply as text (the stop sequence already removed)
//   groundTruth  the dataset's ground-truth field for the problem, as a string
// Return a number (or a Promise of one), by default between 0 and 1. A thrown error scores 0 and
// is reported with its stack; the run goes on.
//
// Keep it offline and deterministic: the same input must always give the same reward (no
// network, no clock, no unseeded randomness). Within GRPO, only groups whose samples get
// different rewards teach the model anything.
//
// Examples in reward.examples.jsonl next to this file are run while you type; their results show
// above the function and mismatches with "expected" are marked in that file.

// the last integer in the reply is taken as the answer ("1,234" counts as 1234)
const INTEGER = /-?\\d+/g;

export function computeReward(completion: string, groundTruth: string): number {
  const numbers = completion.replace(/,/g, '').match(INTEGER);
  if (!numbers) return 0; // no answer at all
  return numbers[numbers.length - 1] === groundTruth.trim() ? 1 : 0;
}
`;

const JAVASCRIPT = TYPESCRIPT.replace('export function computeReward(completion: string, groundTruth: string): number {', 'export function computeReward(completion, groundTruth) {');

export function rewardTemplate(language: TemplateLanguage, examplesFileName: string): string {
  const text = language === 'python' ? PYTHON : language === 'typescript' ? TYPESCRIPT : JAVASCRIPT;
  return text.replace('reward.examples.jsonl', examplesFileName);
}

/** a starting examples file: one right answer, one wrong, one without a number */
export const EXAMPLES_TEMPLATE =
  [
    { completion: 'The answer is 42.', ground_truth: '42', expected: 1 },
    { completion: 'I think it is 41.', ground_truth: '42', expected: 0 },
    { completion: 'No idea.', ground_truth: '42', expected: 0 },
  ]
    .map((e) => JSON.stringify(e))
    .join('\n') + '\n';
