// Python's `json.dumps` as the cookbook's renderers call it, so tool calls and tool declarations
// come out byte for byte as in the cookbook: `", "`/`": "` separators by default, non-ASCII
// escaped as \uXXXX (ensure_ascii), keys optionally sorted, and Python's `str()` of a scalar.
//
// Known limit: JSON numbers are parsed into JS numbers, so a float with no fraction (`2.0`) is
// written `2` where Python writes `2.0`, and integers beyond 2^53 lose precision.

export interface PyJsonOptions {
  /** item and key separators; Python's default is [', ', ': '] */
  separators?: readonly [string, string];
  sortKeys?: boolean;
  /** escape non-ASCII characters (Python's default: true) */
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
    else if (code < 0x20) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else if (ensureAscii && code > 0x7e) {
      // astral characters as a surrogate pair, as Python does
      for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
    } else out += ch;
  }
  return `${out}"`;
}

function pyNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return 'Infinity';
  if (n === -Infinity) return '-Infinity';
  // Python's float repr uses an exponent from 1e16 up and below 1e-4, as JS does from 1e21 / 1e-7
  const s = String(n);
  if (Number.isInteger(n)) return s;
  if (Math.abs(n) < 1e-4 || Math.abs(n) >= 1e16) {
    const e = n.toExponential();
    const [mant, exp] = e.split('e') as [string, string];
    const sign = exp.startsWith('-') ? '-' : '+';
    const digits = exp.replace(/^[+-]/, '').padStart(2, '0');
    return `${mant}e${sign}${digits}`;
  }
  return s;
}

/** `json.dumps(value, separators=…, sort_keys=…, ensure_ascii=…)` */
export function pyJsonDumps(value: unknown, opts: PyJsonOptions = {}): string {
  const [itemSep, keySep] = opts.separators ?? [', ', ': '];
  const ascii = opts.ensureAscii ?? true;
  const enc = (v: unknown): string => {
    if (v === null || v === undefined) return 'null';
    if (v === true) return 'true';
    if (v === false) return 'false';
    if (typeof v === 'number') return pyNumber(v);
    if (typeof v === 'string') return pyString(v, ascii);
    if (Array.isArray(v)) return `[${v.map(enc).join(itemSep)}]`;
    if (typeof v === 'object') {
      let keys = Object.keys(v as Record<string, unknown>);
      if (opts.sortKeys) keys = [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${keys.map((k) => `${pyString(k, ascii)}${keySep}${enc((v as Record<string, unknown>)[k])}`).join(itemSep)}}`;
    }
    return pyString(String(v), ascii);
  };
  return enc(value);
}

/** Python's `str(value)` for a JSON value: `True`, `None`, `1.5`, dicts and lists as their repr. */
export function pyStr(value: unknown): string {
  if (typeof value === 'string') return value;
  return pyRepr(value);
}

/** Python's `repr` of a JSON value (dicts with single-quoted keys, True/False/None). */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : pyNumber(value).replace('NaN', 'nan').replace('Infinity', 'inf');
  if (typeof value === 'string') return pyStringRepr(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  const obj = value as Record<string, unknown>;
  return `{${Object.keys(obj)
    .map((k) => `${pyStringRepr(k)}: ${pyRepr(obj[k])}`)
    .join(', ')}}`;
}

function pyStringRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    if (ch === quote) out += `\\${quote}`;
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch.codePointAt(0)! < 0x20 || ch.codePointAt(0) === 0x7f) out += `\\x${ch.codePointAt(0)!.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

class PyJsonDecodeError extends Error {}

/**
 * Python 3.11's `json.loads` error message for `text` (e.g. "Expecting ',' delimiter: line 1 column
 * 17 (char 16)"), or undefined when it parses: the cookbook writes this text into the error of a tool
 * call it could not parse, and parsed replies are compared with the cookbook's.
 */
export function pyJsonError(text: string): string | undefined {
  const s = Array.from(text); // Python positions count code points
  const fail = (msg: string, pos: number): never => {
    let line = 1;
    let lastNl = -1;
    for (let i = 0; i < pos; i++) {
      if (s[i] === '\n') {
        line++;
        lastNl = i;
      }
    }
    throw new PyJsonDecodeError(`${msg}: line ${line} column ${pos - lastNl} (char ${pos})`);
  };
  const ws = (i: number) => {
    while (i < s.length && (s[i] === ' ' || s[i] === '\t' || s[i] === '\n' || s[i] === '\r')) i++;
    return i;
  };
  const at = (i: number, word: string) => s.slice(i, i + word.length).join('') === word;
  const str = (start: number): number => {
    // start is just after the opening quote
    let i = start;
    for (;;) {
      if (i >= s.length) return fail('Unterminated string starting at', start - 1);
      const c = s[i]!;
      if (c === '"') return i + 1;
      if (c === '\\') {
        const e = s[i + 1];
        if (e === undefined) return fail('Unterminated string starting at', start - 1);
        if (e === 'u') {
          const hex = s.slice(i + 2, i + 6).join('');
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) return fail('Invalid \\uXXXX escape', i + 1);
          i += 6;
          continue;
        }
        if (!'"\\/bfnrt'.includes(e)) return fail('Invalid \\escape', i);
        i += 2;
        continue;
      }
      if (c.codePointAt(0)! < 0x20) return fail('Invalid control character at', i);
      i++;
    }
  };
  const value = (i: number): number => {
    const c = s[i];
    if (c === '"') return str(i + 1);
    if (c === '{') {
      let j = ws(i + 1);
      if (s[j] === '}') return j + 1;
      for (;;) {
        if (s[j] !== '"') return fail('Expecting property name enclosed in double quotes', j);
        j = ws(str(j + 1));
        if (s[j] !== ':') return fail("Expecting ':' delimiter", j);
        j = ws(j + 1);
        j = ws(value(j));
        if (s[j] === '}') return j + 1;
        if (s[j] !== ',') return fail("Expecting ',' delimiter", j);
        j = ws(j + 1);
      }
    }
    if (c === '[') {
      let j = ws(i + 1);
      if (s[j] === ']') return j + 1;
      for (;;) {
        j = ws(value(j));
        if (s[j] === ']') return j + 1;
        if (s[j] !== ',') return fail("Expecting ',' delimiter", j);
        j = ws(j + 1);
      }
    }
    for (const w of ['null', 'true', 'false', 'NaN', 'Infinity', '-Infinity']) if (at(i, w)) return i + w.length;
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/.exec(s.slice(i, i + 400).join(''));
    if (m && m[0] !== '-' && m[0].length > 0) return i + m[0].length;
    return fail('Expecting value', i);
  };
  try {
    const start = ws(0);
    const end = ws(value(start));
    if (end !== s.length) fail('Extra data', end);
    return undefined;
  } catch (e) {
    if (e instanceof PyJsonDecodeError) return e.message;
    throw e;
  }
}
