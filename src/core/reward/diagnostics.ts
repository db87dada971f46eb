// What reward-file validation reports, independent of any editor: problems at exact positions in
// the reward file or its examples file, and the helpers that turn a line (and maybe a column) into
// a range. Positions are 1-based; `endColumn` is exclusive (the column just after the range).

export type RewardDiagnosticSeverity = 'error' | 'warning' | 'information';

export type RewardDiagnosticCode =
  | 'syntax'
  | 'missing-function'
  | 'parameters'
  | 'load'
  | 'exception'
  | 'timeout'
  | 'crash'
  | 'not-finite'
  | 'wrong-shape'
  | 'out-of-range'
  | 'nondeterministic'
  | 'network'
  | 'process'
  | 'examples-file'
  | 'example-mismatch'
  | 'untrusted';

export interface RewardDiagnostic {
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  severity: RewardDiagnosticSeverity;
  message: string;
  code: RewardDiagnosticCode;
}

export type Range = Pick<RewardDiagnostic, 'line' | 'column' | 'endLine' | 'endColumn'>;

export function linesOf(source: string): string[] {
  return source.split(/\r?\n/);
}

/** the line without its indentation and trailing blanks (the whole line's first column if blank) */
export function lineRange(source: string, line: number): Range {
  const lines = linesOf(source);
  const n = Math.min(Math.max(1, line), Math.max(1, lines.length));
  const text = lines[n - 1] ?? '';
  const start = text.length - text.trimStart().length;
  const end = text.trimEnd().length;
  return end > start ? { line: n, column: start + 1, endLine: n, endColumn: end + 1 } : { line: n, column: 1, endLine: n, endColumn: text.length + 1 };
}

/** from `column` to the end of the line's code (trailing blanks left out); the line if no column */
export function restOfLineRange(source: string, line: number, column: number | undefined): Range {
  const whole = lineRange(source, line);
  if (column === undefined) return whole;
  const text = linesOf(source)[whole.line - 1] ?? '';
  const end = text.trimEnd().length;
  if (column > end) return { line: whole.line, column: Math.max(1, Math.min(column, text.length + 1)), endLine: whole.line, endColumn: Math.min(column, text.length) + 1 };
  return { line: whole.line, column, endLine: whole.line, endColumn: end + 1 };
}

/** 1-based line and column of a 0-based offset in `source` */
export function positionAt(source: string, offset: number): { line: number; column: number } {
  const before = source.slice(0, offset).split('\n');
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
}

const WORD = /[A-Za-z0-9_$]/;

/** the identifier at (line, column), else the single character there, else the line */
export function tokenRange(source: string, line: number, column: number | undefined): Range {
  if (column === undefined) return lineRange(source, line);
  const text = linesOf(source)[line - 1];
  if (text === undefined) return lineRange(source, line);
  const i = column - 1;
  if (i >= text.length || i < 0) return restOfLineRange(source, line, column);
  if (!WORD.test(text[i]!)) return { line, column, endLine: line, endColumn: column + 1 };
  let end = i;
  while (end < text.length && WORD.test(text[end]!)) end++;
  return { line, column, endLine: line, endColumn: end + 1 };
}

/** the reward function's name where it is defined (Python `def`, JS/TS function/const/export) */
export function functionNameRange(source: string, language: 'python' | 'javascript'): Range | undefined {
  const patterns =
    language === 'python'
      ? [/^[ \t]*(?:async[ \t]+)?def[ \t]+(compute_reward)\b/m, /^[ \t]*(compute_reward)[ \t]*(?::[^=\n]*)?=/m]
      : [/\bfunction\s*\*?\s*(computeReward)\b/, /\b(?:const|let|var)\s+(computeReward)\b/, /\b(computeReward)\s*[=:(]/];
  for (const re of patterns) {
    const m = re.exec(source);
    if (!m) continue;
    const { line, column } = positionAt(source, m.index + m[0].lastIndexOf(m[1]!));
    return { line, column, endLine: line, endColumn: column + m[1]!.length };
  }
  return undefined;
}

/** where problems of the function as a whole go: its name, else the first line */
export function functionAnchor(source: string, language: 'python' | 'javascript'): Range {
  return functionNameRange(source, language) ?? lineRange(source, 1);
}

const SEVERITY_ORDER: Record<RewardDiagnosticSeverity, number> = { error: 0, warning: 1, information: 2 };

/** by position, then errors before warnings, then by message */
export function compareDiagnostics(a: RewardDiagnostic, b: RewardDiagnostic): number {
  return a.line - b.line || a.column - b.column || SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || a.message.localeCompare(b.message);
}
