// Where and why a JSON text is malformed. JSON.parse's messages and whether they carry a position
// differ between Node versions, so a spec file's syntax error is located by this small scanner
// instead (it runs only after JSON.parse has failed).

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

/** The first syntax error in `text`, or undefined when it is valid JSON. */
export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  let i = 0;
  const show = (at: number) => (at >= text.length ? 'the end of the file' : `'${text[at]}'`);
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const value = (): void => {
    ws();
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
      string();
      ws();
      if (text[i] !== ':') throw new Stop(i, `expected ':' after the property name, found ${show(i)}`);
      i++;
      value();
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
    for (;;) {
      ws();
      if (text[i] === ']') throw new Stop(i, "a trailing comma before ']'");
      value();
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
