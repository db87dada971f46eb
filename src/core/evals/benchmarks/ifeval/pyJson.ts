// Python's `json.loads` as a reader of text the model wrote (IFEval's json_format instruction) and of
// kwargs given as JSON strings: the grammar of JSON.parse plus Python's NaN, Infinity and -Infinity
// literals, which JSON.parse refuses. Whitespace between tokens is JSON's four characters, as in both.
// Nesting past Python's recursion limit raises RecursionError there, not a decode error: NestedTooDeep.

export type PyJson = null | boolean | number | string | PyJson[] | { [key: string]: PyJson };

class NotJson extends Error {}
/** Python's RecursionError in json.loads (its default limit is 1000 frames; nesting is cut at that) */
export class NestedTooDeep extends Error {}
const MAX_DEPTH = 1000;

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?/y;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** `json.loads(text)`, or undefined where Python raises JSONDecodeError. */
export function pyJsonLoads(text: string): { value: PyJson } | undefined {
  try {
    const reader = new Reader(text);
    reader.space();
    const value = reader.value();
    reader.space();
    if (reader.at < text.length) throw new NotJson('extra data');
    return { value };
  } catch (e) {
    if (e instanceof NotJson) return undefined;
    throw e;
  }
}

class Reader {
  at = 0;
  private depth = 0;
  constructor(private readonly text: string) {}

  space(): void {
    while (this.at < this.text.length && ' \t\n\r'.includes(this.text[this.at]!)) this.at++;
  }

  private literal(word: string): boolean {
    if (!this.text.startsWith(word, this.at)) return false;
    this.at += word.length;
    return true;
  }

  value(): PyJson {
    const c = this.text[this.at];
    if (c === '{' || c === '[') {
      if (++this.depth > MAX_DEPTH) throw new NestedTooDeep('JSON nested too deeply');
      const v = c === '{' ? this.object() : this.array();
      this.depth--;
      return v;
    }
    if (c === '"') return this.string();
    if (this.literal('null')) return null;
    if (this.literal('true')) return true;
    if (this.literal('false')) return false;
    if (this.literal('NaN')) return NaN;
    if (this.literal('Infinity')) return Infinity;
    if (this.literal('-Infinity')) return -Infinity;
    NUMBER.lastIndex = this.at;
    const m = NUMBER.exec(this.text);
    if (!m) throw new NotJson('expecting value');
    this.at += m[0].length;
    return Number(m[0]);
  }

  private object(): { [key: string]: PyJson } {
    const out: { [key: string]: PyJson } = {};
    this.at++;
    this.space();
    if (this.text[this.at] === '}') {
      this.at++;
      return out;
    }
    for (;;) {
      if (this.text[this.at] !== '"') throw new NotJson('expecting property name');
      const key = this.string();
      this.space();
      if (this.text[this.at] !== ':') throw new NotJson("expecting ':'");
      this.at++;
      this.space();
      // a key "__proto__" is an ordinary key in Python's dict
      Object.defineProperty(out, key, { value: this.value(), enumerable: true, writable: true, configurable: true });
      this.space();
      const c = this.text[this.at++];
      if (c === '}') return out;
      if (c !== ',') throw new NotJson("expecting ',' delimiter");
      this.space();
    }
  }

  private array(): PyJson[] {
    const out: PyJson[] = [];
    this.at++;
    this.space();
    if (this.text[this.at] === ']') {
      this.at++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.space();
      const c = this.text[this.at++];
      if (c === ']') return out;
      if (c !== ',') throw new NotJson("expecting ',' delimiter");
      this.space();
    }
  }

  private string(): string {
    let out = '';
    this.at++;
    for (;;) {
      const c = this.text[this.at++];
      if (c === undefined) throw new NotJson('unterminated string');
      if (c === '"') return out;
      if (c === '\\') {
        const e = this.text[this.at++];
        if (e === 'u') {
          const hex = this.text.slice(this.at, this.at + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new NotJson('invalid \\uXXXX escape');
          out += String.fromCharCode(parseInt(hex, 16));
          this.at += 4;
        } else if (e !== undefined && Object.hasOwn(ESCAPES, e)) out += ESCAPES[e];
        else throw new NotJson('invalid escape');
      } else if (c < ' ') throw new NotJson('invalid control character');
      else out += c;
    }
  }
}
