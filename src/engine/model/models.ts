// The models the embedded engine serves: their architecture, tokenizer and where the pretrained
// weights file is found (next to the bundle in dist/, or in the source tree for tests and scripts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ByteTokenizerSpec } from '../contract';
import type { GptConfig } from './gptWeights';

export const ARITH_MODEL = 'tinker-studio/arith-gpt';
export const RANDOM_MODEL = 'tinker-studio/random-gpt';
export const WEIGHTS_FILE = 'arith-gpt.tsw';
export const ARITH_CHAT_MODEL = 'tinker-studio/arith-chat';
export const CHAT_WEIGHTS_FILE = 'arith-chat.tsw';

/** The pretrained models: each is served when its weights file is found. */
export const PRETRAINED_MODELS: ReadonlyArray<{ name: string; file: string }> = [
  { name: ARITH_MODEL, file: WEIGHTS_FILE },
  { name: ARITH_CHAT_MODEL, file: CHAT_WEIGHTS_FILE },
];

/** Byte-level: ids 0..255 are UTF-8 bytes; three special tokens follow. */
export const BYTE_TOKENIZER: ByteTokenizerSpec = {
  kind: 'byte',
  vocabSize: 259,
  specialTokens: { '<|endoftext|>': 256, '<|im_start|>': 257, '<|im_end|>': 258 },
  eosToken: '<|endoftext|>',
};

/** 3 layers, d=128, 4 heads, FFN 512, 64 positions: about 0.63 M parameters. */
export const SMALL_GPT: GptConfig = { vocabSize: 259, ctx: 64, d: 128, nLayer: 3, nHead: 4, ffn: 512 };

/**
 * arith-chat: arith-gpt's architecture with 256 rotary positions (3 layers, d=128, 4 heads, FFN 512,
 * no position weights): about 0.63 M parameters (scripts/pretrain-arith-chat.mjs).
 */
export const CHAT_GPT: GptConfig = { ...SMALL_GPT, ctx: 256, rope: true };

/** A pretrained weights file, if present: an explicit folder, next to the code, or in the sources. */
export function findWeightsFile(dir?: string, file: string = WEIGHTS_FILE): string | undefined {
  const candidates = dir
    ? [path.join(dir, file)]
    : [
        path.join(__dirname, file), // dist/ (bundled engine)
        path.join(__dirname, '../weights', file), // out/src/engine/model → out/src/engine/weights
        path.join(__dirname, '../../../../src/engine/weights', file), // out/… → the source tree
        path.join(__dirname, '../src/engine/weights', file), // dist/ → the source tree
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
    for (const x of enc.encode(text.slice(last, m.index))) out.push(x);
    out.push(BYTE_TOKENIZER.specialTokens[m[0]]!);
    last = m.index! + m[0].length;
  }
  for (const x of enc.encode(text.slice(last))) out.push(x);
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

/** The arithmetic holdout (defined with the chats pretraining draws, in core). */
export { isArithHoldout } from '../../core/data/arithChat';
