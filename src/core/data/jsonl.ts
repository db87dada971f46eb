// Problems from a JSONL file: one JSON object per line, each checked on its own. A bad line is
// reported as `<file>:<line>: <what is wrong>` and, by the spec's policy, skipped or fatal.
import { promises as fs } from 'node:fs';
import { DatasetError, ProblemFields, recordToProblem } from './problem';
import type { Problem } from './types';
import { errorMessage } from '../errors';

export type InvalidLinePolicy = 'skip' | 'stop';

export interface JsonlProblems {
  problems: Problem[];
  skipped: Array<{ where: string; reason: string }>;
}

/** A dataset file's text without a UTF-8 BOM; a DatasetError naming `label` when it cannot be read. */
export async function readDatasetText(file: string, label: string): Promise<string> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new DatasetError(`${label}: cannot read the dataset file (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** A function to call now and then in a long loop: once `ms` of work has passed since the last yield, it yields to the event loop. */
export function timeSlicer(ms = 10): () => Promise<void> | undefined {
  let start = performance.now();
  return () => {
    if (performance.now() - start <= ms) return undefined;
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => void (start = performance.now()));
  };
}

/**
 * Reads `file` (shown as `label` in ids and messages). Blank lines are ignored, a UTF-8 BOM and CRLF
 * line ends are tolerated; a last line without "\n" is fine when it is complete JSON and reported as
 * cut off when it is not.
 */
export async function readJsonlProblems(file: string, label: string, fields: ProblemFields, policy: InvalidLinePolicy): Promise<JsonlProblems> {
  const text = await readDatasetText(file, label);
  const lines = text.split('\n');
  const endsWithNewline = lines[lines.length - 1] === '';
  if (endsWithNewline) lines.pop();

  const problems: Problem[] = [];
  const skipped: JsonlProblems['skipped'] = [];
  // a large file is read in slices of at most ~10 ms, yielding to the event loop between them: runs
  // starting together (a sweep) must not hold an editor's extension host for the whole parse
  const slice = timeSlicer();
  for (let i = 0; i < lines.length; i++) {
    if ((i & 255) === 255) await slice();
    const raw = lines[i]!;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') continue;
    const where = `${label}:${i + 1}`;
    const isLastWithoutNewline = !endsWithNewline && i === lines.length - 1;
    let reason: string;
    let value: unknown;
    try {
      value = JSON.parse(line);
      const result = recordToProblem(value, fields, where);
      if (result.ok) {
        problems.push(result.problem);
        continue;
      }
      reason = result.reason;
    } catch (err) {
      const why = errorMessage(err);
      reason = isLastWithoutNewline
        ? `the last line is cut off (no newline at the end, and not complete JSON: ${why})`
        : `invalid JSON: ${why}`;
    }
    if (policy === 'stop')
      throw new DatasetError(`${where}: ${reason} (set dataset.on_invalid_line to "skip" to leave such lines out)`);
    skipped.push({ where, reason });
  }
  return { problems, skipped };
}
