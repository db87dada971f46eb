// Python's str and re semantics that the cookbook's IFEval verifier leans on, so our counts are its
// counts: Python's whitespace (str.split, str.strip and re's \s are one set, wider than JS's \s in
// places and narrower in others: \x1c-\x1f and \x85 are whitespace, \ufeff is not), re's Unicode \w and
// \b (JS's \b is ASCII-only even with the u flag), lengths and slices in code points, and case by the
// Unicode properties Python's str methods read. JS reads the Unicode version of the Node it runs on;
// characters assigned or re-cased after Python's (14.0 for 3.11) can differ (docs/benchmarks.md).

/** Python's whitespace (`str.isspace()`), as the body of a character class. */
export const PY_SPACE = '\\t\\n\\x0B\\f\\r\\x1C-\\x1F \\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000';

const SPACE_RUN = new RegExp(`[${PY_SPACE}]+`, 'u');
const LEADING_SPACE = new RegExp(`^[${PY_SPACE}]+`, 'u');
const TRAILING_SPACE = new RegExp(`[${PY_SPACE}]+$`, 'u');
/** re's `\b\w+\b` on a str: a maximal run of word characters (Python's \w: letters, numbers, `_`) */
const WORD_RUN = /[\p{L}\p{N}_]+/gu;
const ALL_DECIMAL = /^\p{Nd}+$/u;

/** `s.strip()` */
export function pyStrip(s: string): string {
  return s.replace(LEADING_SPACE, '').replace(TRAILING_SPACE, '');
}

/** `s.split()`: runs of whitespace separate, no empty pieces */
export function pySplit(s: string): string[] {
  return pyStrip(s).split(SPACE_RUN).filter((w) => w !== '');
}

/** `len(s)`: code points, not UTF-16 units */
export function pyLen(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** `s.count(sub)`: non-overlapping; an empty `sub` is found len(s) + 1 times */
export function pyCount(s: string, sub: string): number {
  if (sub === '') return pyLen(s) + 1;
  let n = 0;
  for (let at = s.indexOf(sub); at !== -1; at = s.indexOf(sub, at + sub.length)) n++;
  return n;
}

/** `re.findall(r"\b\w+\b", s)` */
export function pyWords(s: string): string[] {
  return s.match(WORD_RUN) ?? [];
}

/** `re.findall(r"\b\d+\b", s)`: a digit run bounded by non-word characters is a whole word of digits */
export function pyNumberWords(s: string): string[] {
  return pyWords(s).filter((w) => ALL_DECIMAL.test(w));
}

/** `s[::-1]`, by code points */
export function pyReversed(s: string): string {
  return Array.from(s).reverse().join('');
}

/** `s[0]` of a non-empty string: its first code point */
export function pyFirstChar(s: string): string {
  return String.fromCodePoint(s.codePointAt(0)!);
}

const ALPHA = /^\p{L}$/u;
const UPPER = /^\p{Uppercase}$/u;
const LOWER = /^\p{Lowercase}$/u;
const TITLE = /^\p{Lt}$/u;

/** `c.isalpha()` of one character */
export const isAlphaChar = (c: string): boolean => ALPHA.test(c);
/** `c.isupper()` of one character */
export const isUpperChar = (c: string): boolean => UPPER.test(c);
/** `c.islower()` of one character */
export const isLowerChar = (c: string): boolean => LOWER.test(c);

/** `s.islower()`: no upper- or titlecase character, and at least one lowercase one */
export function pyIsLower(s: string): boolean {
  let cased = false;
  for (const c of s) {
    if (UPPER.test(c) || TITLE.test(c)) return false;
    if (LOWER.test(c)) cased = true;
  }
  return cased;
}

/**
 * `re.findall(pattern, s, re.MULTILINE)` counted, for a pattern that starts with `^`: Python's `^` in
 * MULTILINE mode matches after "\n" only, where JS's m flag also matches after "\r", U+2028 and U+2029.
 */
export function countLineStartMatches(s: string, afterCaret: string): number {
  const re = new RegExp(`(?:^|(?<=\\n))${afterCaret}`, 'gu');
  let n = 0;
  for (const _ of s.matchAll(re)) n++;
  return n;
}
