// MATH's answer grading as the cookbook grades MATH-500: the last \boxed{…} of the response, then
// equal when (a) the Hendrycks "mathd" normalisation makes the two strings equal, or (b) the looser
// normalisation (units, \text, LaTeX → text) makes them equal, or (c) element by element (tuples,
// intervals) the difference is zero. The cookbook asks sympy for (c); here an expression of at most
// two unknowns is evaluated at fixed points instead (docs/benchmarks.md says where that can differ).
import { latexToText } from './latexText';
import { pythonFloat } from './answers';

/** The content of the LAST `\boxed{…}`; `\boxed 2` without braces; undefined when none (or a `}` is unmatched). */
export function lastBoxed(text: string): string | undefined {
  const found: string[] = [];
  const stack: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '{') stack.push(i);
    else if (text[i] === '}') {
      const open = stack.pop();
      if (open === undefined) return undefined;
      if (text.slice(0, open).endsWith('\\boxed')) found.push(text.slice(open + 1, i));
    }
  }
  if (found.length) return found[found.length - 1];
  const bare = /\\boxed\s+([a-zA-Z0-9]+)/.exec(text);
  return bare ? bare[1] : undefined;
}

class Unchanged extends Error {}

/** Python's int() on a string (whitespace, sign, '_' between digits); undefined when it would raise. */
function pythonInt(s: string): bigint | undefined {
  const t = s.trim();
  if (!/^[+-]?\d(_?\d)*$/.test(t)) return undefined;
  return BigInt(t.replace(/_/g, ''));
}

function fixFracs(s: string): string {
  const parts = s.split('\\frac');
  let out = parts[0]!;
  for (const sub of parts.slice(1)) {
    out += '\\frac';
    if (sub.length === 0) throw new Unchanged(); // Python's substr[0] raises
    if (sub[0] === '{') {
      out += sub;
      continue;
    }
    if (sub.length < 2) return s;
    const a = sub[0]!;
    const b = sub[1]!;
    const post = sub.slice(2);
    out += b !== '{' ? `{${a}}{${b}}${post}` : `{${a}}${b}${post}`;
  }
  return out;
}

function fixSlash(s: string): string {
  const parts = s.split('/');
  if (parts.length !== 2) return s;
  const a = pythonInt(parts[0]!);
  const b = pythonInt(parts[1]!);
  if (a === undefined || b === undefined) return s;
  if (s !== `${a}/${b}`) throw new Unchanged(); // Python's assert
  return `\\frac{${a}}{${b}}`;
}

function removeRightUnits(s: string): string {
  if (!s.includes('\\text{ ')) return s;
  const parts = s.split('\\text{ ');
  if (parts.length !== 2) throw new Unchanged();
  return parts[0]!;
}

function fixSqrt(s: string): string {
  if (!s.includes('\\sqrt')) return s;
  const parts = s.split('\\sqrt');
  let out = parts[0]!;
  for (const p of parts.slice(1)) out += !p || p[0] !== '{' ? `\\sqrt{${p ? p[0] : ''}}${p.slice(1)}` : `\\sqrt${p}`;
  return out;
}

function stripString(input: string): string {
  let s = input.replace(/\n/g, '').replaceAll('\\!', '').replaceAll('\\\\', '\\').replaceAll('tfrac', 'frac').replaceAll('dfrac', 'frac');
  s = s.replaceAll('\\left', '').replaceAll('\\right', '').replaceAll('^{\\circ}', '').replaceAll('^\\circ', '').replaceAll('\\$', '');
  s = removeRightUnits(s);
  s = s.replaceAll('\\%', '').replaceAll(' .', ' 0.').replaceAll('{.', '{0.');
  if (s.length === 0) return s;
  if (s[0] === '.') s = '0' + s;
  const eq = s.split('=');
  if (eq.length === 2 && eq[0]!.length <= 2) s = eq[1]!;
  s = fixSqrt(s).replaceAll(' ', '');
  s = fixFracs(s);
  if (s === '0.5') s = '\\frac{1}{2}';
  return fixSlash(s);
}

/** The Hendrycks MATH normalisation ("mathd"): \text{} unwrapped, \left/\right, degrees, units, spaces, fractions. */
export function normalizeMathd(answer: string): string {
  let a = pyStrip(answer);
  const m = /^\\text\{(.+?)\}$/.exec(a);
  if (m) a = pyStrip(m[1]!);
  try {
    return stripString(a);
  } catch (e) {
    if (e instanceof Unchanged) return a;
    throw e;
  }
}

function pyStrip(s: string): string {
  return s.replace(/^[\s\u001c-\u001f\u0085]+|[\s\u001c-\u001f\u0085]+$/g, '');
}

const UNITS = ['degree', 'cm', 'centimeter', 'meter', 'mile', 'second', 'minute', 'hour', 'day', 'week', 'month', 'year', 'foot', 'feet', 'inch', 'yard'];

function isIntLike(x: number): boolean {
  return Number.isFinite(x) && Math.abs(x - Math.round(x)) <= 1e-7;
}

function stripFormattedCommas(expr: string): string {
  for (;;) {
    const next = expr.replace(/(\d)(,)(\d\d\d)($|\D)/g, '$1$3$4');
    if (next === expr) return next;
    expr = next;
  }
}

function strIsInt(s: string): boolean {
  const x = pythonFloat(stripFormattedCommas(s));
  return x !== undefined && isIntLike(x);
}

function intText(x: number): string {
  return BigInt(Math.trunc(x)).toString();
}

/** The looser normalisation: \text{}, $, %, "or"/"and" as commas, units, LaTeX to text, lower case. */
export function normalizeLoose(input: string): string {
  let e = input;
  const m = /^\\text\{(.+?)\}$/.exec(e);
  if (m) e = m[1]!;
  e = e.replaceAll('\\%', '%').replaceAll('\\$', '$').replaceAll('$', '').replaceAll('%', '').replaceAll(' or ', ' , ').replaceAll(' and ', ' , ');
  e = e.replaceAll('million', '*10^6').replaceAll('billion', '*10^9').replaceAll('trillion', '*10^12');
  for (const unit of UNITS) e = e.replace(new RegExp(`${unit}(es)?(s)? *(\\^[0-9]+)?`, 'g'), '');
  e = e.replace(/\^ *\\circ/g, '');
  if (e.length > 0 && e[0] === '{' && e[e.length - 1] === '}') e = e.slice(1, -1);
  e = e.replace(/,\\! */g, '');
  const f = pythonFloat(e);
  if (f !== undefined && isIntLike(f)) e = BigInt(Math.round(f)).toString();
  if (e.includes('\\')) {
    const t = latexToText(e.replaceAll('\\tfrac', '\\frac').replaceAll('\\dfrac', '\\frac').replaceAll('\\frac', ' \\frac'));
    if (t !== undefined)
      e = pyStrip(t.replaceAll('√', 'sqrt').replaceAll('π', 'pi').replaceAll('∞', 'inf').replaceAll('∪', 'U').replaceAll('·', '*').replaceAll('×', '*'));
  }
  e = e.replace(/- */g, '-').replace(/([0-9]) +([0-9])/g, '$1+$2').replaceAll(' ', '').replaceAll('{', '').replaceAll('}', '').toLowerCase();
  if (strIsInt(e)) e = intText(pythonFloat(e.replaceAll(',', ''))!);
  return e;
}

const TUPLE_CHARS = '()[]';

function splitTuple(expr: string): string[] {
  const e = stripFormattedCommas(expr);
  if (e.length === 0) return [];
  if (e.length > 2 && TUPLE_CHARS.includes(e[0]!) && TUPLE_CHARS.includes(e[e.length - 1]!) && ![...e.slice(1, -1)].some((c) => TUPLE_CHARS.includes(c)))
    return e.slice(1, -1).split(',').map(pyStrip);
  return [e];
}

function isFrac(e: string): boolean {
  return /^-?[0-9]+.?\/0*[1-9][0-9]*.?$/.test(e);
}

function unknownLetters(expr: string): number {
  return new Set([...expr.replaceAll('sqrt', '').replaceAll('frac', '')].filter((c) => /\p{L}/u.test(c))).size;
}

function allowEval(expr: string): boolean {
  if (unknownLetters(expr) > 2) return false;
  if (expr.includes('^{') || expr.includes('^(')) return false;
  return !/\^[0-9]+\^/.test(expr) && !/\^[0-9][0-9]+/.test(expr);
}

/** (c): the difference of the two expressions is zero at every point where both are defined. */
export function equalAsExpressions(truth: string, given: string): boolean {
  if (!allowEval(`(${truth})-(${given})`)) return false;
  const a = compileExpression(truth);
  const b = compileExpression(given);
  if (!a || !b) return false;
  const vars = [...new Set([...a.vars, ...b.vars])].sort();
  const points = [
    [0.7341, 1.9127],
    [2.3719, -0.8113],
    [-1.4427, 3.1623],
  ];
  let compared = 0;
  for (const p of points) {
    const env = new Map(vars.map((v, i) => [v, p[i % p.length]!]));
    const x = a.evaluate(env);
    const y = b.evaluate(env);
    if (Number.isNaN(x) && Number.isNaN(y)) continue;
    if (!Number.isFinite(x) || !Number.isFinite(y)) return false;
    if (Math.abs(x - y) > 1e-9 * Math.max(1, Math.abs(x), Math.abs(y))) return false;
    compared++;
  }
  return compared > 0;
}

/** Whether `given` is a correct answer for `truth` (MATH's rules). */
export function mathAnswersEqual(given: string, truth: string): boolean {
  if (normalizeMathd(truth) === normalizeMathd(given)) return true;
  const t = normalizeLoose(truth);
  const g = normalizeLoose(given);
  if (t === g) return true;
  if (g.length === 0) return false;
  const te = splitTuple(t);
  const ge = splitTuple(g);
  if ((te.length > 1 && (t[0] !== g[0] || t[t.length - 1] !== g[g.length - 1])) || te.length !== ge.length) return false;
  for (let i = 0; i < te.length; i++) {
    const x = te[i]!;
    const y = ge[i]!;
    let ok: boolean;
    if (isFrac(x) && isFrac(y)) ok = x === y; // unreduced fractions are not accepted
    else if (strIsInt(x) !== strIsInt(y)) ok = false; // an integer answer must match exactly
    else ok = equalAsExpressions(x, y);
    if (!ok) return false;
  }
  return true;
}

interface Compiled {
  vars: string[];
  evaluate(env: ReadonlyMap<string, number>): number;
}

type Node = (env: ReadonlyMap<string, number>) => number;
const FUNCTIONS: Record<string, (x: number) => number> = { sqrt: Math.sqrt, exp: Math.exp, log: Math.log, ln: Math.log, sin: Math.sin, cos: Math.cos, tan: Math.tan };
const CONSTANTS: Record<string, number> = { pi: Math.PI };

/** Parses an answer as an expression: numbers, + - * / ^ **, parentheses, sqrt(…), pi, single-letter unknowns, implicit products. */
export function compileExpression(src: string): Compiled | undefined {
  const text = src.replaceAll('^', '**');
  type Tok = { k: 'num'; v: number } | { k: 'name'; v: string } | { k: 'op'; v: string };
  const toks: Tok[] = [];
  for (let i = 0; i < text.length; ) {
    const c = text[i]!;
    const num = /^(\d+\.?\d*|\.\d+)(e[+-]?\d+)?/i.exec(text.slice(i));
    if (num && /[\d.]/.test(c)) {
      toks.push({ k: 'num', v: Number(num[0]) });
      i += num[0].length;
    } else if (/[a-z]/i.test(c)) {
      const name = /^[a-z]+/i.exec(text.slice(i))![0];
      i += name.length;
      // a name sympy does not know is split into one-letter unknowns
      if (name in FUNCTIONS || name in CONSTANTS) toks.push({ k: 'name', v: name });
      else for (const ch of name) toks.push({ k: 'name', v: ch });
    } else if (text.startsWith('**', i)) {
      toks.push({ k: 'op', v: '**' });
      i += 2;
    } else if ('+-*/()'.includes(c)) {
      toks.push({ k: 'op', v: c });
      i++;
    } else return undefined;
  }
  const vars = new Set<string>();
  let pos = 0;
  const peek = () => toks[pos];
  const isOp = (v: string) => peek()?.k === 'op' && peek()!.v === v;
  const startsOperand = () => {
    const t = peek();
    return t !== undefined && (t.k !== 'op' || t.v === '(');
  };
  const sum = (): Node => {
    let left = product();
    while (isOp('+') || isOp('-')) {
      const op = toks[pos++]!.v;
      const l = left;
      const r = product();
      left = op === '+' ? (e) => l(e) + r(e) : (e) => l(e) - r(e);
    }
    return left;
  };
  const product = (): Node => {
    let left = unary();
    for (;;) {
      if (isOp('*') || isOp('/')) {
        const op = toks[pos++]!.v;
        const l = left;
        const r = unary();
        left = op === '*' ? (e) => l(e) * r(e) : (e) => l(e) / r(e);
      } else if (startsOperand()) {
        const l = left;
        const r = power();
        left = (e) => l(e) * r(e);
      } else return left;
    }
  };
  const unary = (): Node => {
    if (isOp('-')) {
      pos++;
      const x = unary();
      return (e) => -x(e);
    }
    if (isOp('+')) {
      pos++;
      return unary();
    }
    return power();
  };
  const power = (): Node => {
    const base = atom();
    if (isOp('**')) {
      pos++;
      const exp = unary();
      return (e) => Math.pow(base(e), exp(e));
    }
    return base;
  };
  const atom = (): Node => {
    const t = toks[pos++];
    if (!t) throw new Error('end');
    if (t.k === 'num') return () => t.v;
    if (t.k === 'name') {
      const f = FUNCTIONS[t.v];
      if (f) {
        const arg = startsOperand() ? power() : undefined;
        if (!arg) throw new Error('function without argument');
        return (e) => f(arg(e));
      }
      const c = CONSTANTS[t.v];
      if (c !== undefined) return () => c;
      vars.add(t.v);
      return (e) => e.get(t.v) ?? NaN;
    }
    if (t.v === '(') {
      const inner = sum();
      if (!isOp(')')) throw new Error('unclosed');
      pos++;
      return inner;
    }
    throw new Error(`unexpected ${t.v}`);
  };
  try {
    if (toks.length === 0) return undefined;
    const root = sum();
    if (pos !== toks.length) return undefined;
    return { vars: [...vars], evaluate: root };
  } catch {
    return undefined;
  }
}
