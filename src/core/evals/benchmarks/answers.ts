// Reading an answer out of a response, as the cookbook's benchmarks read it: the first \boxed{…}
// (GSM8K, AIME), a final number (GSM8K's fallbacks), a multiple-choice letter (MMLU-Redux).
// The goldens (test/fixtures/benchmarks/*.goldens.json, made by the cookbook's own Python) check
// each rule; `\d` and `\b` here are ASCII, as the goldens' cases are (see docs/benchmarks.md).

/** The content of the FIRST `\boxed{…}` (nested braces), or undefined when there is none or it is not closed. */
export function firstBoxed(text: string): string | undefined {
  const at = text.indexOf('\\boxed{');
  if (at < 0) return undefined;
  const start = at + '\\boxed{'.length;
  let depth = 1;
  let i = start;
  for (; i < text.length && depth > 0; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}') depth--;
  }
  return depth === 0 ? text.slice(start, i - 1) : undefined;
}

/** A number out of a LaTeX answer: `\text{…}`, commands, braces, `$`, commas and spaces dropped, then the first number (or what is left). */
export function numberIn(text: string): string {
  const cleaned = text
    .replace(/\\text\{[^}]*\}/g, '')
    .replace(/\\[a-zA-Z]+/g, '')
    .replace(/[{}$, ]/g, '');
  const m = /-?\d+\.?\d*/.exec(cleaned);
  return m ? m[0] : cleaned.trim();
}

/** GSM8K's final number: `\boxed{}`, then `#### x`, then "answer is / answer:", then the last bold number, then the last number. */
export function gsm8kAnswer(text: string): string {
  const boxed = firstBoxed(text);
  if (boxed) return numberIn(boxed);
  const hash = /####\s*(.+)/.exec(text);
  if (hash) return numberIn(hash[1]!);
  const said = /(?:answer is|answer:)\s*\$?([0-9,.-]+)/i.exec(text);
  if (said) return said[1]!.trim().replace(/,/g, '');
  const bold = [...text.matchAll(/\*\*\$?(-?\d+[,\d]*\.?\d*)/g)];
  if (bold.length) return bold[bold.length - 1]![1]!.replace(/,/g, '').replace(/\.+$/, '');
  const numbers = text.match(/-?\d+[,\d]*\.?\d*/g);
  if (numbers) return numbers[numbers.length - 1]!.replace(/,/g, '');
  return '';
}

/** Python's float() on a string: surrounding whitespace, '_' between digits, inf/nan words. */
export function pythonFloat(s: string): number | undefined {
  const t = s.trim();
  if (/^[+-]?(\d(_?\d)*)?(\.(\d(_?\d)*)?)?([eE][+-]?\d(_?\d)*)?$/.test(t) && /\d/.test(t) && !/^[+-]?\.?[eE]/.test(t)) {
    const v = Number(t.replace(/_/g, ''));
    return Number.isNaN(v) ? undefined : v;
  }
  if (/^[+-]?(inf|infinity)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(t)) return NaN;
  return undefined;
}

/** GSM8K's check: the numbers agree within 1e-5, or (not numbers) the texts are equal. */
export function gsm8kCorrect(extracted: string, expected: string): boolean {
  const want = expected.replace(/,/g, '');
  const a = pythonFloat(extracted);
  const b = pythonFloat(want);
  if (a !== undefined && b !== undefined) return Math.abs(a - b) < 1e-5;
  return extracted.trim() === want.trim();
}

/** A multiple-choice letter: `\boxed{X}`, then "answer is (X)" / "answer: X", then the last standalone letter in the last 300 characters. */
export function choiceLetter(text: string, letters = 'ABCD'): string {
  const boxed = firstBoxed(text);
  if (boxed !== undefined) {
    const b = boxed.trim().toUpperCase();
    if (b.length === 1 && letters.includes(b)) return b;
  }
  const said = new RegExp(`(?:answer is|answer:)\\s*\\(?([${letters}])\\)?`, 'i').exec(text);
  if (said) return said[1]!.toUpperCase();
  const tail = pythonTail(text, 300);
  const found = tail.match(new RegExp(`\\b[${letters}]\\b`, 'g'));
  return found ? found[found.length - 1]! : '';
}

/** Python's text[-n:] counts code points, not UTF-16 units. */
function pythonTail(text: string, n: number): string {
  const points = Array.from(text);
  return points.length <= n ? text : points.slice(points.length - n).join('');
}
