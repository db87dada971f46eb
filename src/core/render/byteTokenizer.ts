// The embedded engine's byte-level tokenizer: ids 0..255 are UTF-8 bytes, three special tokens
// follow. The spec is duplicated here as data (core never imports the engine); a unit test checks
// that it matches the engine's own.

import type { Tokenizer } from './types';

export interface ByteTokenizerSpec {
  vocabSize: number;
  /** special token text → id */
  specialTokens: Readonly<Record<string, number>>;
  eosToken: string;
}

export const ENGINE_BYTE_TOKENIZER: ByteTokenizerSpec = {
  vocabSize: 259,
  specialTokens: { '<|endoftext|>': 256, '<|im_start|>': 257, '<|im_end|>': 258 },
  eosToken: '<|endoftext|>',
};

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export class ByteTokenizer implements Tokenizer {
  readonly name = 'byte';
  readonly vocabSize = ENGINE_BYTE_TOKENIZER.vocabSize;
  readonly eosTokenId = ENGINE_BYTE_TOKENIZER.specialTokens[ENGINE_BYTE_TOKENIZER.eosToken]!;
  readonly bosTokenId = undefined;
  private readonly idByText = new Map(Object.entries(ENGINE_BYTE_TOKENIZER.specialTokens));
  private readonly textById = new Map([...this.idByText].map(([text, id]) => [id, text]));
  private readonly specialRe = new RegExp([...this.idByText.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|'), 'g');
  private readonly utf8 = new TextEncoder();

  encode(text: string): number[] {
    return [...this.utf8.encode(text)];
  }

  encodeWithSpecialTokens(text: string): number[] {
    const out: number[] = [];
    let last = 0;
    for (const m of text.matchAll(this.specialRe)) {
      for (const x of this.encode(text.slice(last, m.index))) out.push(x);
      out.push(this.idByText.get(m[0])!);
      last = m.index + m[0].length;
    }
    for (const x of this.encode(text.slice(last))) out.push(x);
    return out;
  }

  decode(ids: readonly number[]): string {
    // Bytes are decoded in runs, so a character split over several ids comes out whole.
    let out = '';
    let run: number[] = [];
    const flush = () => {
      if (run.length) out += new TextDecoder().decode(Uint8Array.from(run));
      run = [];
    };
    for (const id of ids) {
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) throw new RangeError(`byte tokenizer: token id ${id} is outside the vocabulary (0..${this.vocabSize - 1})`);
      if (id < 256) run.push(id);
      else {
        flush();
        out += this.textById.get(id) ?? '';
      }
    }
    flush();
    return out;
  }

  specialTokenId(text: string): number | undefined {
    return this.idByText.get(text);
  }

  isSpecial(id: number): boolean {
    return this.textById.has(id);
  }
}
