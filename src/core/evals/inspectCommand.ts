// "Copy Inspect Command": the `inspect eval` line that runs an Inspect Evals task on a checkpoint through
// the backend's OpenAI-compatible API (the route for what we do not grade natively). The key is never
// part of the line: Inspect's openai provider reads OPENAI_API_KEY from the environment.

/** Inspect Evals tasks offered first (any other task name may be typed). */
export const INSPECT_TASK_SUGGESTIONS: ReadonlyArray<{ task: string; what: string }> = [
  { task: 'gsm8k', what: 'grade-school math word problems' },
  { task: 'math', what: 'competition mathematics (MATH)' },
  { task: 'aime2025', what: 'AIME 2025' },
  { task: 'ifeval', what: 'instruction following' },
  { task: 'mmlu_pro', what: 'multi-subject knowledge (MMLU-Pro)' },
  { task: 'gpqa_diamond', what: 'graduate-level science questions' },
  { task: 'humaneval', what: 'Python functions from docstrings' },
  { task: 'mbpp', what: 'basic Python programming' },
];

const TASK = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;

/** Whether `task` can be an Inspect Evals task name (`gsm8k`, or a full `inspect_evals/gsm8k`). */
export function isInspectTaskName(task: string): boolean {
  return TASK.test(task.trim());
}

/** A word for a POSIX shell: as is when it is plain, else single-quoted. */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * `inspect eval inspect_evals/<task> --model openai/<model> --model-base-url <base>`: `task` without a
 * slash is an Inspect Evals task; `model` is the checkpoint's tinker:// sampler path or a base model name.
 */
export function inspectEvalCommand(a: { task: string; model: string; baseUrl: string; limit?: number }): string {
  const task = a.task.trim();
  if (!isInspectTaskName(task)) throw new Error(`"${a.task}" is not an Inspect task name (letters, digits, "_", "." or "-", e.g. gsm8k or inspect_evals/gsm8k)`);
  if (!/^https?:\/\/\S+$/.test(a.baseUrl)) throw new Error(`"${a.baseUrl}" is not an http(s) URL`);
  const full = task.includes('/') ? task : `inspect_evals/${task}`;
  const parts = ['inspect', 'eval', full, '--model', shellWord(`openai/${a.model}`), '--model-base-url', shellWord(a.baseUrl.replace(/\/+$/, ''))];
  if (a.limit !== undefined) parts.push('--limit', String(a.limit));
  return parts.join(' ');
}
