// Python's json as the cookbook uses it: its renderers read tool arguments with json.loads and write
// them and tool declarations with json.dumps, so a number keeps the form Python gives it (100.0 stays
// 100.0, 1e5 becomes 100000.0, 98765432109876543210 stays exact). JSON.parse keeps neither the ".0"
// nor integers past 2^53, so JSON text that reaches a renderer is read with parseJsonKeepingNumbers:
// the values are plain JS values (zod and every other reader see ordinary numbers), and the number
// forms JS would lose are recorded beside the object or array that holds them, for pyJsonDumps.

/** container → key (an array's index as a string) → Python's json.dumps text of the number there */
const numberForms = new WeakMap<object, Map<string, string>>();

/** Python's json.dumps text of the number at `container[key]`, when the JSON it was read from gave one. */
export function numberFormAt(container: object, key: string | number): string | undefined {
  const value = (container as Record<string, unknown>)[key];
  const form = typeof value === 'number' ? numberForms.get(container)?.get(String(key)) : undefined;
  // a value changed since it was read is written as it is now
  return form !== undefined && Number(form) === value ? form : undefined;
}

/** Carries the recorded number forms of `from` over to `to` (a copy with some or all of its keys). */
export function copyNumberForms(from: object, to: object): void {
  const forms = numberForms.get(from);
  if (forms) numberForms.set(to, new Map(forms));
}

/** Python's repr of a float (what json.dumps writes): 100.0, 0.0001, 1e-05, 1e+16, 1.5e+300. */
function pyFloatRepr(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0';
  const sign = n < 0 ? '-' : '';
  // the shortest digits that round-trip, as Python's repr picks them
  const [mantissa, exponent] = Math.abs(n).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const exp = Number(exponent);
  const point = exp + 1; // where the decimal point goes, counted from the first digit
  if (point <= -4 || point > 16) {
    const tail = digits.length > 1 ? `.${digits.slice(1)}` : '';
    return `${sign}${digits[0]}${tail}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}.0`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** A JS number with no recorded form: an integral value as Python's int, any other as its float. */
function pyNumber(n: number): string {
  if (Number.isInteger(n)) return Number.isSafeInteger(n) ? String(n === 0 ? 0 : n) : BigInt(n).toString();
  return pyFloatRepr(n);
}

/**
 * Python's json.dumps text of a JSON number token (json.loads then json.dumps), where it differs from
 * what pyNumber writes for the JS number: a float token with a whole value (100.0, 1e5), an integer
 * token past 2^53. Any other token: undefined.
 */
function pyFormOfToken(token: string, n: number): string | undefined {
  if (/[.eE]/.test(token)) return Number.isInteger(n) ? pyFloatRepr(n) : undefined;
  return Number.isSafeInteger(n) ? undefined : token;
}

const WHITESPACE = /[ \t\n\r]*/y;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const LITERAL = /true|false|null/y;
/** Python's json.loads stops near here too (its recursion limit); past it the text is refused, not a stack overflow */
const MAX_DEPTH = 1000;

/**
 * JSON.parse, also keeping the form of each number Python's json would write differently from JS
 * (whole-number floats, integers past 2^53, exponents) for pyJsonDumps. Throws a SyntaxError, as
 * JSON.parse does, on anything that is not JSON.
 */
export function parseJsonKeepingNumbers(text: string): unknown {
  return parseInto(text, undefined);
}

/** The error of text that is not JSON in JSON.parse's own words (what users saw before), else ours. */
function notJson(text: string, ours: SyntaxError): never {
  JSON.parse(text);
  throw ours;
}

/**
 * `container[key] = ` the JSON value of `text`, keeping a lone number's form too (a parameter value
 * of an XML tool call is a JSON text of its own). Throws a SyntaxError when `text` is not JSON.
 */
export function assignParsedJson(container: Record<string, unknown>, key: string, text: string): void {
  container[key] = parseInto(text, { container, key });
}

function parseInto(text: string, top: { container: object; key: string } | undefined): unknown {
  let pos = 0;
  const fail = (what: string): never => notJson(text, new SyntaxError(`${what} at position ${pos} of the JSON text`));
  const skip = (): void => {
    WHITESPACE.lastIndex = pos;
    WHITESPACE.exec(text);
    pos = WHITESPACE.lastIndex;
  };
  const match = (re: RegExp): string | undefined => {
    re.lastIndex = pos;
    const m = re.exec(text);
    if (!m) return undefined;
    pos = re.lastIndex;
    return m[0];
  };
  const remember = (container: object, key: string, token: string): void => {
    const form = pyFormOfToken(token, Number(token));
    if (form === undefined) return;
    let forms = numberForms.get(container);
    if (!forms) numberForms.set(container, (forms = new Map()));
    forms.set(key, form);
  };
  // a value; a number token is handed to `onNumber` so its container can record its form
  const value = (depth: number, onNumber: (token: string) => void): unknown => {
    if (depth > MAX_DEPTH) fail(`nested deeper than ${MAX_DEPTH} levels`);
    skip();
    const ch = text[pos];
    if (ch === '"') {
      const s = match(STRING);
      return s === undefined ? fail('unterminated or invalid string') : (JSON.parse(s) as string);
    }
    if (ch === '{') {
      pos++;
      const obj: Record<string, unknown> = {};
      skip();
      if (text[pos] === '}') {
        pos++;
        return obj;
      }
      for (;;) {
        skip();
        const k = text[pos] === '"' ? match(STRING) : undefined;
        if (k === undefined) fail('expected a property name');
        const key = JSON.parse(k!) as string;
        skip();
        if (text[pos] !== ':') fail("expected ':'");
        pos++;
        const v = value(depth + 1, (token) => remember(obj, key, token));
        // "__proto__" as an own key, as JSON.parse makes it
        Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
        skip();
        if (text[pos] === ',') pos++;
        else if (text[pos] === '}') {
          pos++;
          return obj;
        } else fail("expected ',' or '}'");
      }
    }
    if (ch === '[') {
      pos++;
      const arr: unknown[] = [];
      skip();
      if (text[pos] === ']') {
        pos++;
        return arr;
      }
      for (;;) {
        const index = String(arr.length);
        arr.push(value(depth + 1, (token) => remember(arr, index, token)));
        skip();
        if (text[pos] === ',') pos++;
        else if (text[pos] === ']') {
          pos++;
          return arr;
        } else fail("expected ',' or ']'");
      }
    }
    const num = match(NUMBER);
    if (num !== undefined) {
      onNumber(num);
      return Number(num);
    }
    const lit = match(LITERAL);
    if (lit !== undefined) return lit === 'null' ? null : lit === 'true';
    return fail(pos >= text.length ? 'unexpected end' : `unexpected ${JSON.stringify(text[pos])}`);
  };
  const result = value(0, (token) => (top ? remember(top.container, top.key, token) : undefined));
  skip();
  if (pos < text.length) fail('unexpected text after the JSON value');
  return result;
}

export interface DumpsOptions {
  /** Python's `separators` (default `(', ', ': ')`) */
  itemSeparator?: string;
  keySeparator?: string;
  /** Python's ensure_ascii (default true): non-ASCII written as \uXXXX */
  ensureAscii?: boolean;
}

function pyString(s: string, ensureAscii: boolean): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (code < 0x20 || (ensureAscii && code > 0x7e)) {
      // surrogate pairs as two escapes, as Python writes them
      for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
    } else out += ch;
  }
  return out + '"';
}

/**
 * Python's json.dumps of a JSON value. A number read by parseJsonKeepingNumbers is written in the
 * form Python gives it; any other number as an int when its value is whole, else as a float.
 * Object members whose value is undefined are left out (JSON.stringify does the same).
 */
export function pyJsonDumps(value: unknown, opts: DumpsOptions = {}): string {
  const item = opts.itemSeparator ?? ', ';
  const sep = opts.keySeparator ?? ': ';
  const ascii = opts.ensureAscii ?? true;
  const dump = (v: unknown, form: string | undefined): string => {
    if (v === null || v === undefined) return 'null';
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'number') return form ?? pyNumber(v);
    if (typeof v === 'string') return pyString(v, ascii);
    if (Array.isArray(v)) return `[${v.map((x, i) => dump(x, numberFormAt(v, i))).join(item)}]`;
    if (typeof v === 'object') {
      return `{${Object.entries(v as Record<string, unknown>)
        .filter(([, x]) => x !== undefined)
        .map(([k, x]) => `${pyString(k, ascii)}${sep}${dump(x, numberFormAt(v, k))}`)
        .join(item)}}`;
    }
    return 'null';
  };
  return dump(value, undefined);
}

/**
 * Python's json.dumps of `container[key]`: like pyJsonDumps, but a number there keeps the form it
 * was read in (a lone number has no container to record it).
 */
export function pyJsonDumpsMember(container: object, key: string | number, opts: DumpsOptions = {}): string {
  const v = (container as Record<string, unknown>)[key];
  return typeof v === 'number' ? (numberFormAt(container, key) ?? pyNumber(v)) : pyJsonDumps(v, opts);
}

/** Python's `str()` of a JSON value: True, None, 1.5, a dict or list as its repr. */
export function pyStr(value: unknown, numberForm?: string): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return numberForm ?? pyNumber(value);
  if (Array.isArray(value)) return `[${value.map((x, i) => pyRepr(x, numberFormAt(value, i))).join(', ')}]`;
  return `{${Object.entries(value as Record<string, unknown>)
    .map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x, numberFormAt(value as object, k))}`)
    .join(', ')}}`;
}

/** Python's `str()` of `container[key]`, a number there in the form it was read in. */
export function pyStrMember(container: object, key: string | number): string {
  return pyStr((container as Record<string, unknown>)[key], numberFormAt(container, key));
}

function pyRepr(value: unknown, numberForm?: string): string {
  if (typeof value !== 'string') return pyStr(value, numberForm);
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  const body = value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
  return quote + (quote === "'" ? body.replace(/'/g, "\\'") : body) + quote;
}
