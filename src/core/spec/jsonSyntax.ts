// Where and why a JSON text is malformed, and where each property of a well-formed one stands.
// JSON.parse's messages and whether they carry a position differ between Node versions, so a spec
// file's syntax error is located by this small scanner instead (it runs only after JSON.parse has
// failed); the same walk tells the spec diagnostics where a field is written.

export interface JsonSyntaxError {
  /** 0-based offset of the offending character (the text's length at an early end) */
  offset: number;
  line: number;
  column: number;
  message: string;
}

class Stop extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

/** Where a value stands in the text: its start, and its property name's start when it has one. */
export interface JsonPlace {
  value: number;
  key?: { offset: number; length: number };
}

/** The first syntax error in `text`, or undefined when it is valid JSON. */
export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  return scan(text);
}

/** Every value of a well-formed JSON text by its path (JSON of the keys and indexes, e.g. `["dataset","path"]`). */
export function jsonPlaces(text: string): Map<string, JsonPlace> {
  const places = new Map<string, JsonPlace>();
  scan(text, (p, place) => places.set(JSON.stringify(p), place));
  return places;
}

function scan(text: string, record?: (path: ReadonlyArray<string | number>, place: JsonPlace) => void): JsonSyntaxError | undefined {
  let i = 0;
  const at: Array<string | number> = [];
  let key: JsonPlace['key'];
  const show = (at: number) => (at >= text.length ? 'the end of the file' : `'${text[at]}'`);
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const value = (): void => {
    ws();
    if (record) {
      record(at, { value: i, ...(key ? { key } : {}) });
      key = undefined;
    }
    const c = text[i];
    if (c === '{') return object();
    if (c === '[') return array();
    if (c === '"') return string();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return number();
    for (const word of ['true', 'false', 'null'])
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    throw new Stop(i, `expected a value, found ${show(i)}`);
  };
  const object = () => {
    i++; // {
    ws();
    if (text[i] === '}') {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (text[i] !== '"') throw new Stop(i, text[i] === '}' ? "a trailing comma before '}'" : `expected a property name in double quotes, found ${show(i)}`);
      const keyStart = i;
      string();
      const keyEnd = i;
      ws();
      if (text[i] !== ':') throw new Stop(i, `expected ':' after the property name, found ${show(i)}`);
      i++;
      if (record) {
        key = { offset: keyStart, length: keyEnd - keyStart };
        at.push(JSON.parse(text.slice(keyStart, keyEnd)) as string);
      }
      value();
      if (record) at.pop();
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '}') {
        i++;
        return;
      }
      throw new Stop(i, `expected ',' or '}' after a property value, found ${show(i)}`);
    }
  };
  const array = () => {
    i++; // [
    ws();
    if (text[i] === ']') {
      i++;
      return;
    }
    for (let n = 0; ; n++) {
      ws();
      if (text[i] === ']') throw new Stop(i, "a trailing comma before ']'");
      at.push(n);
      value();
      at.pop();
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === ']') {
        i++;
        return;
      }
      throw new Stop(i, `expected ',' or ']' after a list item, found ${show(i)}`);
    }
  };
  const string = () => {
    const start = i;
    i++; // "
    for (;;) {
      if (i >= text.length) throw new Stop(start, 'a string that is never closed');
      const c = text[i]!;
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        const e = text[i + 1];
        if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else throw new Stop(i, 'an invalid escape in a string');
      } else if (c < ' ') throw new Stop(i, c === '\n' ? 'a line break inside a string (write \\n)' : 'a control character inside a string');
      else i++;
    }
  };
  const number = () => {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) throw new Stop(i, 'an invalid number');
    i += m[0].length;
  };
  try {
    value();
    ws();
    if (i < text.length) throw new Stop(i, `unexpected text after the JSON value, found ${show(i)}`);
    return undefined;
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    const before = text.slice(0, err.offset);
    const line = before.split('\n').length;
    const column = err.offset - (before.lastIndexOf('\n') + 1) + 1;
    return { offset: err.offset, line, column, message: err.message };
  }
}
