// Reading JSON-lines files written by us or by the Python tinker-cookbook. Python's json module
// writes the bare tokens NaN, Infinity and -Infinity; a run still being written may end in a partial
// line without "\n". Both are normal and handled; any other bad line is reported with its number.
import { errorMessage } from '../errors';

export interface JsonlProblem {
  file: string;
  line: number;
  message: string;
}

export interface JsonlRecord {
  /** 1-based line number in the file */
  line: number;
  value: unknown;
}

export interface JsonlRead {
  records: JsonlRecord[];
  /** malformed complete lines (the trailing partial line is not a problem, just not yet written) */
  problems: JsonlProblem[];
  /** true when the file ends in a line without "\n" that was left out */
  partialTail: boolean;
}

const NON_FINITE = /([:[,]\s*)(NaN|-?Infinity)(?=\s*[,\]}])/g;
const SENTINEL = '__tinker_non_finite__:';

function revive(_key: string, value: unknown): unknown {
  if (typeof value === 'string' && value.startsWith(SENTINEL)) {
    const token = value.slice(SENTINEL.length);
    return token === 'NaN' ? NaN : token === 'Infinity' ? Infinity : -Infinity;
  }
  return value;
}

/** Parses one JSON line, accepting Python's non-finite number tokens. Throws SyntaxError. */
export function parseJsonLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch (err) {
    if (!/NaN|Infinity/.test(line)) throw err;
    return JSON.parse(line.replace(NON_FINITE, (_m, pre: string, tok: string) => `${pre}"${SENTINEL}${tok}"`), revive);
  }
}

export function parseJsonl(text: string, file: string): JsonlRead {
  const records: JsonlRecord[] = [];
  const problems: JsonlProblem[] = [];
  const lines = text.split('\n');
  // The last element is '' when the text ends in "\n"; otherwise it is a line still being written.
  const partialTail = lines[lines.length - 1] !== '';
  lines.slice(0, -1).forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      records.push({ line: i + 1, value: parseJsonLine(line) });
    } catch (err) {
      problems.push({ file, line: i + 1, message: errorMessage(err) });
    }
  });
  return { records, problems, partialTail };
}

/** JSON.stringify that writes non-finite numbers the way Python does, so both sides read each other. */
export function stringifyJsonLine(value: unknown): string {
  // A non-finite number comes out of plain JSON.stringify as null; without any null the plain text is
  // the answer, and the replacer pass (about twice as slow) is skipped.
  const plain = JSON.stringify(value);
  if (!plain.includes('null')) return plain;
  return JSON.stringify(value, (_k, v: unknown) =>
    typeof v === 'number' && !Number.isFinite(v) ? `${SENTINEL}${Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity'}` : v,
  ).replace(new RegExp(`"${SENTINEL}(NaN|-?Infinity)"`, 'g'), '$1');
}
