// Example cases for validating a reward function: the companion examples file
// `<reward name>.examples.jsonl` next to the reward file (one {completion, ground_truth, expected?}
// per line, each checked with zod, problems reported by line), and cases drawn from a finished run:
// the dataset's ground truths with the completions the run's model produced.
import * as z from 'zod';
import type { RewardDiagnostic } from './diagnostics';
import { lineRange } from './diagnostics';
import { errorMessage } from '../errors';

export interface RewardExample {
  completion: string;
  groundTruth: string;
  /** the reward the author expects; a different result is a mismatch */
  expected?: number;
  /** where the example comes from, for messages: "reward.examples.jsonl:3" or "run …, iteration 4" */
  source: string;
  /** 1-based line in the examples file (examples-file examples only) */
  line?: number;
  /** the reward a run recorded for this completion (run examples only) */
  recorded?: number;
}

const ExampleLine = z.strictObject({
  completion: z.string({ error: 'must be a string (the completion text)' }),
  ground_truth: z.union([z.string(), z.number().transform(String)], { error: 'must be a string or a number' }),
  expected: z.number({ error: 'must be a number (the reward you expect)' }).refine(Number.isFinite, 'must be a finite number').optional(),
});

export interface ParsedExamples {
  examples: RewardExample[];
  /** problems in the examples file, at their line */
  diagnostics: RewardDiagnostic[];
}

/** Parses an examples file's text; blank lines are allowed, every other line must be an example. */
export function parseExamples(text: string, label: string): ParsedExamples {
  const examples: RewardExample[] = [];
  const diagnostics: RewardDiagnostic[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    const problem = (message: string) => diagnostics.push({ ...lineRange(text, line), severity: 'error', code: 'examples-file', message });
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      problem(`not valid JSON (${errorMessage(err)}); each line is {"completion": …, "ground_truth": …, "expected": …}`);
      return;
    }
    const r = ExampleLine.safeParse(value, { reportInput: true });
    if (!r.success) {
      problem(r.error.issues.map((issue) => describeIssue(issue)).join('; '));
      return;
    }
    examples.push({
      completion: r.data.completion,
      groundTruth: r.data.ground_truth,
      ...(r.data.expected !== undefined ? { expected: r.data.expected } : {}),
      source: `${label}:${line}`,
      line,
    });
  });
  return { examples, diagnostics };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.length > 0 ? issue.path.join('.') : '(line)';
  if (issue.code === 'unrecognized_keys') return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')} (allowed: completion, ground_truth, expected)`;
  if (issue.path.length > 0 && issue.input === undefined) return `${field}: is required`;
  if (issue.code === 'invalid_type' && issue.path.length === 0) return 'must be a JSON object {"completion": …, "ground_truth": …, "expected": …}';
  return `${field}: ${issue.message}`;
}

/** rewards compare equal when within this tolerance (floats printed and parsed back) */
export const MATCH_TOLERANCE = 1e-6;

export function matches(expected: number, reward: number): boolean {
  return Math.abs(expected - reward) <= MATCH_TOLERANCE;
}
