// The models the embedded engine serves: their architecture, tokenizer and where the pretrained
// weights file is found (next to the bundle in dist/, or in the source tree for tests and scripts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ByteTokenizerSpec } from '../contract';
import type { GptConfig } from './gpt';

export const ARITH_MODEL = 'tinker-studio/arith-gpt';
export const RANDOM_MODEL = 'tinker-studio/random-gpt';
export const WEIGHTS_FILE = 'arith-gpt.tsw';

/** Byte-level: ids 0..255 are UTF-8 bytes; three special tokens follow. */
export const BYTE_TOKENIZER: ByteTokenizerSpec = {
  kind: 'byte',
  vocabSize: 259,
  specialTokens: { '<|endoftext|>': 256, '<|im_start|>': 257, '<|im_end|>': 258 },
  eosToken: '<|endoftext|>',
};

/** 3 layers, d=128, 4 heads, FFN 512, 64 positions: about 0.63 M parameters. */
export const SMALL_GPT: GptConfig = { vocabSize: 259, ctx: 64, d: 128, nLayer: 3, nHead: 4, ffn: 512 };

/** The pretrained weights file, if present: an explicit folder, next to the code, or in the sources. */
export function findWeightsFile(dir?: string): string | undefined {
  const candidates = dir
    ? [path.join(dir, WEIGHTS_FILE)]
    : [
        path.join(__dirname, WEIGHTS_FILE), // dist/ (bundled engine)
        path.join(__dirname, '../weights', WEIGHTS_FILE), // out/src/engine/model → out/src/engine/weights
        path.join(__dirname, '../../../../src/engine/weights', WEIGHTS_FILE), // out/… → the source tree
        path.join(__dirname, '../src/engine/weights', WEIGHTS_FILE), // dist/ → the source tree
      ];
  return candidates.find((f) => fs.existsSync(f));
}

/** Byte-level encoding of text with the special tokens recognised (the chatml renderer's job). */
export function encodeChat(text: string): number[] {
  const out: number[] = [];
  const re = /<\|(?:endoftext|im_start|im_end)\|>/g;
  let last = 0;
  const enc = new TextEncoder();
  for (const m of text.matchAll(re)) {
    out.push(...enc.encode(text.slice(last, m.index)));
    out.push(BYTE_TOKENIZER.specialTokens[m[0]]!);
    last = m.index! + m[0].length;
  }
  out.push(...enc.encode(text.slice(last)));
  return out;
}

export function decodeBytes(tokens: ArrayLike<number>): string {
  const names = Object.fromEntries(Object.entries(BYTE_TOKENIZER.specialTokens).map(([k, v]) => [v, k]));
  let out = '';
  let buf: number[] = [];
  const flush = () => {
    out += new TextDecoder().decode(Uint8Array.from(buf));
    buf = [];
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t < 256) buf.push(t);
    else {
      flush();
      out += names[t] ?? `<|${t}|>`;
    }
  }
  flush();
  return out;
}

/**
 * The arithmetic holdout: the pairs (x, y), x and y in 0..99, that pretraining never sees and that
 * evaluations use. A hash picks 10 % of the pairs with no digit pattern, so the holdout measures
 * addition learnt, not a digit left out (an earlier rule, (100x + y) mod 10 = 7, held out every y
 * ending in 7 — a digit the model then never saw in that position).
 */
export function isArithHoldout(x: number, y: number): boolean {
  let h = (x * 100 + y + 1) >>> 0;
  // murmur3's 32-bit finaliser
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  return h % 10 === 0;
}
