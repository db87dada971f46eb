// A spec file's text to a JSON value, with every problem worded `<file>: …` (a syntax error with its
// line and column), and the error type that carries those problems.
import { promises as fs } from 'node:fs';
import { errorMessage } from '../errors';
import { findJsonSyntaxError } from './jsonSyntax';

/** A spec file that cannot be used; `problems` holds one line per problem, each naming file and field. */
export class RunSpecError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'RunSpecError';
  }
}

/** A spec file's text; a RunSpecError naming the file when it cannot be read. */
export async function readSpecText(abs: string): Promise<string> {
  try {
    return await fs.readFile(abs, 'utf8');
  } catch (err) {
    throw new RunSpecError([`${abs}: cannot read the spec file (${(err as NodeJS.ErrnoException).code ?? String(err)})`]);
  }
}

/** JSON.parse, with a syntax error reported as `<file>:<line>:<column>: invalid JSON: …`. */
export function parseJsonWithPosition(text: string, fileLabel: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === '') throw new RunSpecError([`${fileLabel}: the file is empty (expected a JSON object)`]);
  try {
    return JSON.parse(body);
  } catch (err) {
    const found = findJsonSyntaxError(body);
    if (found) throw new RunSpecError([`${fileLabel}:${found.line}:${found.column}: invalid JSON: ${found.message}`]);
    throw new RunSpecError([`${fileLabel}: invalid JSON: ${errorMessage(err)}`]);
  }
}
