// LaTeX → plain text for MATH's looser answer normalisation, as the cookbook's grader gets it from
// pylatexenc 2.11's latex_to_text: \frac{a}{b} → "a/b" (no parentheses), \sqrt{x} → "√(x)", symbols to
// their Unicode characters, unknown macros dropped (their braced arguments kept as text), groups
// unwrapped. Only what an answer holds is covered; undefined where pylatexenc would fail.

const SYMBOLS: Record<string, string> = {
  pi: 'π', infty: '∞', cup: '∪', cap: '∩', cdot: '·', times: '×', div: '÷', le: '≤', leq: '≤', ge: '≥', geq: '≥', neq: '≠', ne: '≠',
  pm: '±', mp: '∓', circ: '∘', in: '∈', ldots: '…', dots: '…', cdots: '⋯', to: '→', rightarrow: '→', approx: '≈', emptyset: '∅',
  varnothing: '∅', mid: '|', alpha: 'α', beta: 'β', gamma: 'γ', delta: 'δ', theta: 'θ', lambda: 'λ', mu: 'μ', sigma: 'σ', phi: 'φ', omega: 'ω',
  quad: '  ', qquad: '    ', sin: 'sin', cos: 'cos', tan: 'tan', log: 'log', ln: 'ln', exp: 'exp', left: '', right: '',
};
const ESCAPES: Record<string, string> = { '\\': '\n', ',': ' ', ';': ' ', ':': ' ', ' ': ' ', '!': '', '{': '{', '}': '}', '%': '%', '$': '$', '&': '&', _: '_', '#': '#' };

class LatexFailure extends Error {}

export function latexToText(src: string): string | undefined {
  let i = 0;
  const skipSpace = () => {
    while (i < src.length && (src[i] === ' ' || src[i] === '\t')) i++;
    if (src[i] === '\n') i++;
  };
  /** one argument of a macro: a group, a macro, or one character */
  const argument = (): string => {
    while (i < src.length && /\s/.test(src[i]!)) i++;
    if (i >= src.length) throw new LatexFailure('missing argument');
    if (src[i] === '{') {
      i++;
      return until('}');
    }
    if (src[i] === '\\') return macro();
    return src[i++]!;
  };
  const macro = (): string => {
    i++; // the backslash
    const name = /^[a-zA-Z]+/.exec(src.slice(i))?.[0];
    if (!name) {
      const c = src[i++];
      if (c === undefined) return '';
      return ESCAPES[c] ?? '';
    }
    i += name.length;
    skipSpace();
    if (name === 'frac' || name === 'nicefrac' || name === 'textfrac') {
      const a = argument();
      const b = argument();
      return `${a}/${b}`;
    }
    if (name === 'sqrt') {
      if (src[i] === '[') {
        const close = src.indexOf(']', i);
        if (close < 0) throw new LatexFailure('unclosed [');
        i = close + 1;
      }
      return `√(${argument()})`;
    }
    if (name === 'mbox') {
      argument();
      return '';
    }
    return SYMBOLS[name] ?? '';
  };
  const until = (close: '}' | undefined): string => {
    let out = '';
    while (i < src.length) {
      const c = src[i]!;
      if (c === '}') {
        i++;
        if (close === '}') return out;
        continue;
      }
      if (c === '{') {
        i++;
        out += until('}');
      } else if (c === '\\') out += macro();
      else if (c === '$') i++;
      else if (c === '~') {
        out += '\u00a0';
        i++;
      } else if (c === '%') {
        const nl = src.indexOf('\n', i);
        i = nl < 0 ? src.length : nl + 1;
      } else {
        out += c;
        i++;
      }
    }
    return out;
  };
  try {
    return until(undefined);
  } catch (e) {
    if (e instanceof LatexFailure) return undefined;
    throw e;
  }
}
