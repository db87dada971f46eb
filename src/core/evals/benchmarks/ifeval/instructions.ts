// IFEval's instruction checks as the cookbook grades them (its own verifier of 48 instruction types,
// not Google's reference implementation): one entry per instruction id. Each reads the response and
// that instruction's kwargs with Python's semantics (pyText, pyKwargs); docs/benchmarks.md says where
// the cookbook's checks are lenient and where ours could differ.
import { NestedTooDeep, pyJsonLoads } from './pyJson';
import { PyTypeError, kwGet, pyIndex, pyIter, pyNumber, pyStr, relationHolds } from './pyKwargs';
import {
  PY_SPACE,
  countLineStartMatches,
  isAlphaChar,
  isLowerChar,
  isUpperChar,
  pyCount,
  pyFirstChar,
  pyIsLower,
  pyLen,
  pyNumberWords,
  pyReversed,
  pySplit,
  pyStrip,
  pyWords,
} from './pyText';

type Check = (response: string, kwargs: unknown) => boolean;

const lowerOf = (v: unknown, what: string) => pyStr(v, what).toLowerCase();
const SENTENCE_BREAK = new RegExp(`(?<=[.!?])[${PY_SPACE}]+`, 'u');

function sentenceCount(text: string): number {
  return pyStrip(text)
    .split(SENTENCE_BREAK)
    .filter((s) => pyStrip(s) !== '').length;
}

/** paragraphs are separated by a blank line ("\n\n"); empty ones do not count */
function paragraphsOf(text: string): string[] {
  return text
    .split('\n\n')
    .map(pyStrip)
    .filter((p) => p !== '');
}

const IS_SPACE = new RegExp(`^[${PY_SPACE}]$`, 'u');
const BULLETS = '*-•';

/**
 * The count of `re.findall(r"^\s*[\*\-\•]\s", text, re.MULTILINE)` in one pass: as a regex it backtracks
 * over every line start of a long blank run (quadratic; minutes on a degenerate response). From a line
 * start the whitespace run ends at the same place for every line start inside it, so one look decides.
 */
function bulletCount(text: string): number {
  let n = 0;
  let lineStart = 0;
  while (lineStart <= text.length) {
    let q = lineStart;
    while (q < text.length && IS_SPACE.test(text[q]!)) q++;
    const bullet = q + 1 < text.length && BULLETS.includes(text[q]!) && IS_SPACE.test(text[q + 1]!);
    if (bullet) n++;
    // the next line start the regex could match from: past the bullet and its space, else past the run
    const from = bullet ? q + 2 : q + 1;
    const nl = text.indexOf('\n', from - 1);
    if (nl === -1) break;
    lineStart = nl + 1;
  }
  return n;
}

/** The count of `re.findall(r"\[.*?\]", text)` in one pass: `.` stops at "\n", so a "[" whose line has no "]" after it never matches */
function placeholderCount(text: string): number {
  let n = 0;
  for (const line of text.split('\n')) {
    for (let open = line.indexOf('['); open !== -1; ) {
      const close = line.indexOf(']', open + 1);
      if (close === -1) break;
      n++;
      open = line.indexOf('[', close + 1);
    }
  }
  return n;
}

function keywordsExist(response: string, kw: unknown): boolean {
  const text = response.toLowerCase();
  return pyIter(kwGet(kw, 'keywords', []), 'keywords').every((k) => text.includes(lowerOf(k, 'a keyword')));
}

function noForbiddenWords(response: string, kw: unknown): boolean {
  const text = response.toLowerCase();
  return pyIter(kwGet(kw, 'forbidden_words', []), 'forbidden_words').every((w) => !text.includes(lowerOf(w, 'a forbidden word')));
}

function keywordFrequency(response: string, kw: unknown): boolean {
  const keyword = kwGet(kw, 'keyword', '');
  const relation = kwGet(kw, 'relation', 'at least');
  const frequency = kwGet(kw, 'frequency', 0);
  return relationHolds(pyCount(response.toLowerCase(), lowerOf(keyword, 'keyword')), relation, frequency);
}

function letterFrequency(response: string, kw: unknown): boolean {
  const letter = kwGet(kw, 'letter', '');
  const relation = kwGet(kw, 'let_relation', 'at least');
  const frequency = kwGet(kw, 'let_frequency', 0);
  return relationHolds(pyCount(response.toLowerCase(), lowerOf(letter, 'letter')), relation, frequency);
}

function startAndEndWords(response: string, kw: unknown): boolean {
  const start = lowerOf(kwGet(kw, 'start_word', ''), 'start_word');
  const end = lowerOf(kwGet(kw, 'end_word', ''), 'end_word');
  const words = pyWords(response.toLowerCase());
  if (words.length === 0) return false;
  return (start === '' || words[0] === start) && (end === '' || words[words.length - 1] === end);
}

function keywordAtPosition(response: string, kw: unknown): boolean {
  const keyword = lowerOf(kwGet(kw, 'keyword', ''), 'keyword');
  const position = kwGet(kw, 'position', 0);
  const words = pyWords(response.toLowerCase());
  const p = pyNumber(position, 'position');
  if (p < 1 || p > words.length) return false;
  return pyIndex(words, p - 1, 'position') === keyword;
}

function nthParagraphFirstWord(response: string, kw: unknown): boolean {
  const nth = kwGet(kw, 'nth_paragraph', 1);
  const firstWord = lowerOf(kwGet(kw, 'first_word', ''), 'first_word');
  const paragraphs = paragraphsOf(response);
  if (pyNumber(nth, 'nth_paragraph') > paragraphs.length) return false;
  // Python indexes from the end for nth ≤ 0, as the cookbook's check does
  const words = pyWords(pyIndex(paragraphs, pyNumber(nth, 'nth_paragraph') - 1, 'nth_paragraph').toLowerCase());
  return words.length > 0 && words[0] === firstWord;
}

function isJson(response: string): boolean {
  if (pyJsonLoads(pyStrip(response))) return true;
  // else the first flat {...} anywhere in the response
  const braces = /\{[^{}]*\}/u.exec(response);
  return braces !== null && pyJsonLoads(braces[0]) !== undefined;
}

function firstWordIs(response: string, kw: unknown): boolean {
  const first = lowerOf(kwGet(kw, 'first_word', ''), 'first_word');
  const words = pyWords(response.toLowerCase());
  return words.length > 0 && words[0] === first;
}

function lastWordIs(response: string, kw: unknown): boolean {
  const last = lowerOf(kwGet(kw, 'last_word', ''), 'last_word');
  const words = pyWords(response.toLowerCase());
  return words.length > 0 && words[words.length - 1] === last;
}

function letterCount(response: string, kw: unknown): boolean {
  const letter = lowerOf(kwGet(kw, 'letter', ''), 'letter');
  const fallback = kwGet(kw, 'num_letters', 0);
  const n = kwGet(kw, 'N', fallback);
  const relation = kwGet(kw, 'relation', 'at least');
  return relationHolds(pyCount(response.toLowerCase(), letter), relation, n);
}

function paragraphsAtLeast(response: string, kw: unknown): boolean {
  const wanted = kwGet(kw, 'num_paragraphs', 1);
  return paragraphsOf(response).length >= pyNumber(wanted, 'num_paragraphs');
}

/**
 * langdetect is an optional extra of the cookbook (`eval-ifbench`); without it the check passes once
 * the language kwarg reads as a string — what the goldens' environment (no langdetect wheel) does.
 */
function responseLanguage(_response: string, kw: unknown): boolean {
  lowerOf(kwGet(kw, 'language', ''), 'language');
  return true;
}

function repeatedPhrase(response: string, kw: unknown): boolean {
  const phrase = kwGet(kw, 'phrase', '');
  const fallback = kwGet(kw, 'num_repeats', 1);
  const n = kwGet(kw, 'N', fallback);
  return pyCount(response, pyStr(phrase, 'phrase')) >= pyNumber(n, 'N');
}

const atLeast = (count: number, kw: unknown, key: string, fallback: number) => count >= pyNumber(kwGet(kw, key, fallback), key);

/** Every instruction type the cookbook's verifier knows, by id. */
const CHECKS: Record<string, Check> = {
  'keywords:existence': keywordsExist,
  'keywords:forbidden_words': noForbiddenWords,
  'keywords:frequency': keywordFrequency,
  'keywords:letter_frequency': letterFrequency,
  'keywords:word_once': (r, kw) => pyCount(r.toLowerCase(), lowerOf(kwGet(kw, 'keyword', ''), 'keyword')) === 1,
  'keywords:word_count_different_numbers': (r, kw) => {
    const n = kwGet(kw, 'N', 0);
    return new Set(pyNumberWords(r)).size >= pyNumber(n, 'N');
  },
  'keywords:start_end': startAndEndWords,
  'keywords:keyword_specific_position': keywordAtPosition,
  'keywords:palindrome': (r) => pyWords(r.toLowerCase()).some((w) => pyLen(w) > 1 && w === pyReversed(w)),
  'keywords:no_adjacent_consecutive': (r) => pyWords(r.toLowerCase()).every((w, i, ws) => i === 0 || ws[i - 1] !== w),

  'punctuation:no_comma': (r) => !r.includes(','),
  'punctuation:punctuation_exclamation': (r) => !r.includes('!'),
  'punctuation:punctuation_dot': (r) => !r.includes('.'),

  'length_constraints:number_words': (r, kw) => {
    const relation = kwGet(kw, 'relation', 'at least');
    return relationHolds(pySplit(r).length, relation, kwGet(kw, 'num_words', 0));
  },
  'length_constraints:number_sentences': (r, kw) => {
    const relation = kwGet(kw, 'relation', 'at least');
    return relationHolds(sentenceCount(r), relation, kwGet(kw, 'num_sentences', 0));
  },
  'length_constraints:number_paragraphs': (r, kw) => {
    const relation = kwGet(kw, 'relation', 'at least');
    return relationHolds(paragraphsOf(r).length, relation, kwGet(kw, 'num_paragraphs', 0));
  },
  'length_constraints:nth_paragraph_first_word': nthParagraphFirstWord,

  'detectable_format:title': (r) => pyStrip(r).startsWith('<<') || pyStrip(r).startsWith('#'),
  'detectable_format:number_bullet_lists': (r, kw) => atLeast(bulletCount(r), kw, 'num_bullets', 1),
  'detectable_format:number_highlighted_sections': (r, kw) => atLeast([...r.matchAll(/\*[^*]+\*/gu)].length, kw, 'num_highlights', 1),
  'detectable_format:multiple_sections': (r, kw) => {
    const wanted = kwGet(kw, 'num_sections', 1);
    return countLineStartMatches(r, `#{1,6}[${PY_SPACE}]`) >= pyNumber(wanted, 'num_sections');
  },
  'detectable_format:json_format': isJson,
  'detectable_format:constrained_response': () => true,
  'detectable_format:bigram_wrapping': (r) => r.includes('<<') && r.includes('>>'),
  'detectable_format:sentence_hyphens': (r) => r.split('\n').some((line) => pyStrip(line).startsWith('-')),
  'detectable_format:square_brackets': (r) => r.includes('[') && r.includes(']'),

  'detectable_content:postscript': (r) => ['P.S.', 'P.S', 'PS:', 'p.s.'].some((marker) => r.includes(marker)),
  'detectable_content:number_placeholders': (r, kw) => atLeast(placeholderCount(r), kw, 'num_placeholders', 1),

  'change_case:english_capital': (r) =>
    pySplit(r)
      .map(pyFirstChar)
      .every((c) => !isAlphaChar(c) || isUpperChar(c)),
  'change_case:english_lowercase': (r) => Array.from(r).every((c) => !isAlphaChar(c) || isLowerChar(c)),
  'change_case:capital_word_frequency': (r, kw) => {
    const frequency = kwGet(kw, 'capital_frequency', 0);
    const relation = kwGet(kw, 'capital_relation', 'at least');
    return relationHolds(pySplit(r).filter((w) => isUpperChar(pyFirstChar(w))).length, relation, frequency);
  },

  'first_word:first_word_answer': firstWordIs,
  'first_word:first_word_sent': firstWordIs,
  'last_word:last_word_answer': lastWordIs,
  'last_word:last_word_sent': lastWordIs,

  'startend:end_checker': (r, kw) => {
    const end = lowerOf(kwGet(kw, 'end_phrase', ''), 'end_phrase');
    return pyStrip(r).toLowerCase().endsWith(end);
  },
  'startend:quotation': (r) => {
    const s = pyStrip(r);
    return (s.startsWith('"') && s.endsWith('"')) || (s.startsWith("'") && s.endsWith("'"));
  },

  'count:lowercase_counting': (r, kw) => {
    const n = kwGet(kw, 'N', 0);
    return pySplit(r).filter(pyIsLower).length >= pyNumber(n, 'N');
  },
  'count:count_increment_word': (r, kw) => {
    const keyword = lowerOf(kwGet(kw, 'keyword', ''), 'keyword');
    return atLeast(pyCount(r.toLowerCase(), keyword), kw, 'N', 1);
  },
  'count:count_unique': (r, kw) => {
    const n = kwGet(kw, 'N', 0);
    return new Set(pyWords(r.toLowerCase())).size >= pyNumber(n, 'N');
  },
  'count:counting_composition': () => true,

  'letters:letter_counting': letterCount,
  'letters:letter_counting2': letterCount,
  'paragraphs:paragraphs': paragraphsAtLeast,
  'paragraphs:paragraphs2': paragraphsAtLeast,
  'language:response_language': responseLanguage,
  'copy:repeat_phrase': repeatedPhrase,
  'combination:two_responses': (r) => ['***', '---', '===', 'Response 1', 'Response 2'].some((s) => r.includes(s)),
};

/** The instruction ids the verifier checks; any other id passes, as in the cookbook (e.g. combination:repeat_prompt). */
export const CHECKED_INSTRUCTIONS: readonly string[] = Object.keys(CHECKS);

/** Whether the response meets one instruction; a kwarg Python could not use means not met. */
export function verifyInstruction(instructionId: string, response: string, kwargs: unknown): boolean {
  const id = pyStrip(instructionId);
  if (!Object.hasOwn(CHECKS, id)) return true;
  try {
    return CHECKS[id]!(response, kwargs);
  } catch (e) {
    // what Python raises inside a check (TypeError, IndexError, RecursionError) is "not met" there
    if (e instanceof PyTypeError || e instanceof NestedTooDeep) return false;
    throw e;
  }
}

export interface InstructionResults {
  /** the share of instructions met: the prompt's score (the cookbook's `fraction`) */
  fraction: number;
  /** one entry per distinct instruction id, in first-seen order (a repeated id keeps its last result) */
  results: [string, boolean][];
}

/**
 * Every instruction of a prompt with its kwargs (instructionKwargs' list: missing ones are {}, extra
 * ones ignored). A repeated id counts once, as the cookbook's dict of results does.
 */
export function verifyAllInstructions(response: string, instructionIds: readonly string[], kwargsList: readonly unknown[]): InstructionResults {
  if (instructionIds.length === 0) return { fraction: 1, results: [] };
  const results = new Map<string, boolean>();
  instructionIds.forEach((id, i) => results.set(id, verifyInstruction(id, response, i < kwargsList.length ? kwargsList[i] : {})));
  const met = [...results.values()].filter(Boolean).length;
  return { fraction: met / results.size, results: [...results] };
}
