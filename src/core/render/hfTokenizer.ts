// A Tokenizer over @huggingface/tokenizers, built from a model's tokenizer.json and
// tokenizer_config.json. It reproduces the HF (Rust) tokenizer's ids; `encode` follows
// `split_special_tokens=True` (what the cookbook uses for Qwen3 message content), and
// `encodeWithSpecialTokens` the default `encode(text, add_special_tokens=False)`.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Tokenizer as HfLibTokenizer } from '@huggingface/tokenizers';
import * as z from 'zod';
import { TokenizerFilesError } from './errors';
import type { Tokenizer } from './types';
import { errorMessage } from '../errors';

const AddedTokenJson = z.looseObject({
  id: z.number().int().nonnegative(),
  content: z.string().min(1),
  special: z.boolean().default(false),
  lstrip: z.boolean().default(false),
  rstrip: z.boolean().default(false),
  normalized: z.boolean().default(false),
  single_word: z.boolean().default(false),
});

/** The parts of tokenizer.json this module relies on; the rest is passed to the library as is. */
export const TokenizerJson = z.looseObject({
  model: z.looseObject({ type: z.string().optional() }),
  added_tokens: z.array(AddedTokenJson).default([]),
  normalizer: z.unknown().default(null),
  pre_tokenizer: z.unknown().default(null),
  post_processor: z.unknown().default(null),
  decoder: z.unknown().default(null),
});

/** A token named in tokenizer_config.json: a string, or the older `{"content": …}` form. */
const TokenRef = z.union([z.string(), z.looseObject({ content: z.string() })]).nullish();

export const TokenizerConfigJson = z.looseObject({
  bos_token: TokenRef,
  eos_token: TokenRef,
  clean_up_tokenization_spaces: z.boolean().optional(),
  chat_template: z.union([z.string(), z.array(z.looseObject({ name: z.string(), template: z.string() }))]).optional(),
});
export type TokenizerConfigJson = z.infer<typeof TokenizerConfigJson>;

type AddedToken = z.infer<typeof AddedTokenJson>;

function tokenText(ref: z.infer<typeof TokenRef>): string | undefined {
  if (ref === null || ref === undefined) return undefined;
  return typeof ref === 'string' ? ref : ref.content;
}

function describeIssues(error: z.ZodError, source: string): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${source}: ${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`)
    .join('\n');
}

/** Validates parsed JSON with `schema`, or throws naming the file and field. */
function parseEdge<S extends z.ZodType>(schema: S, value: unknown, source: string): z.infer<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw new TokenizerFilesError(`${source} is not a valid tokenizer file:\n${describeIssues(r.error, source)}`);
  return r.data;
}

export class HfTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly eosTokenId?: number;
  readonly bosTokenId?: number;
  /** the chat template of tokenizer_config.json, when it has one (tests compare against it) */
  readonly chatTemplate?: string;
  private readonly lib: HfLibTokenizer;
  /** transformers' default is false when tokenizer_config.json does not say (the library's is true); never for BPE */
  private readonly cleanUpSpaces: boolean;
  private readonly addedByContent = new Map<string, AddedToken>();
  private readonly specialIds = new Set<number>();
  /** added tokens that stay recognised when special-token text is not interpreted, longest first */
  private readonly nonSpecialAdded: AddedToken[];

  constructor(
    readonly name: string,
    tokenizerJson: unknown,
    configJson: unknown,
    source = name,
  ) {
    const tj = parseEdge(TokenizerJson, tokenizerJson, `${source}/tokenizer.json`);
    const cfg = parseEdge(TokenizerConfigJson, configJson, `${source}/tokenizer_config.json`);
    try {
      this.lib = new HfLibTokenizer(tj, cfg);
    } catch (e) {
      throw new TokenizerFilesError(`${source}: the tokenizer could not be built from tokenizer.json: ${errorMessage(e)}`);
    }
    let maxId = this.lib.model ? this.lib.model.vocab.length - 1 : -1;
    for (const t of tj.added_tokens) {
      this.addedByContent.set(t.content, t);
      if (t.special) this.specialIds.add(t.id);
      maxId = Math.max(maxId, t.id);
    }
    this.vocabSize = maxId + 1;
    this.nonSpecialAdded = tj.added_tokens.filter((t) => !t.special).sort((a, b) => b.content.length - a.content.length);
    this.bosTokenId = this.idOf(tokenText(cfg.bos_token));
    this.eosTokenId = this.idOf(tokenText(cfg.eos_token));
    // As transformers 5 (which the cookbook's goldens run with): the clean-up is never applied to
    // BPE tokenizers, whatever tokenizer_config.json says (Llama 3's says true). It strips spaces
    // before punctuation that the model did produce, so a parsed reply would no longer re-render
    // to the tokens sampled.
    this.cleanUpSpaces = (cfg.clean_up_tokenization_spaces ?? false) && tj.model.type !== 'BPE';
    const tpl = cfg.chat_template;
    this.chatTemplate = typeof tpl === 'string' ? tpl : tpl?.find((t) => t.name === 'default')?.template;
  }

  private idOf(text: string | undefined): number | undefined {
    if (text === undefined) return undefined;
    return this.addedByContent.get(text)?.id ?? this.lib.token_to_id(text);
  }

  encodeWithSpecialTokens(text: string): number[] {
    if (text.length === 0) return [];
    return this.lib.encode(text, { add_special_tokens: false }).ids;
  }

  encode(text: string): number[] {
    // Split only on non-special added tokens (e.g. Qwen3's `<think>`), as the Rust tokenizer does
    // with `encode_special_tokens`; everything between goes through normalizer → pre-tokenizer → model.
    const out: number[] = [];
    const pieces = this.splitOnNonSpecialAdded(text);
    pieces.forEach((p, i) => {
      if (typeof p === 'number') out.push(p);
      else for (const t of this.encodePlain(p, i)) out.push(t);
    });
    return out;
  }

  private splitOnNonSpecialAdded(text: string): (string | number)[] {
    if (this.nonSpecialAdded.length === 0) return [text];
    const pieces: (string | number)[] = [];
    let pos = 0;
    for (;;) {
      let best: { at: number; tok: AddedToken } | undefined;
      for (const tok of this.nonSpecialAdded) {
        const at = text.indexOf(tok.content, pos);
        // longest first, so on a tie the earlier (longer) candidate is kept
        if (at >= 0 && (best === undefined || at < best.at)) best = { at, tok };
      }
      if (!best) break;
      let before = text.slice(pos, best.at);
      if (best.tok.lstrip) before = before.trimEnd();
      pieces.push(before, best.tok.id);
      pos = best.at + best.tok.content.length;
      if (best.tok.rstrip) while (pos < text.length && /\s/.test(text[pos]!)) pos++;
    }
    pieces.push(text.slice(pos));
    return pieces.filter((p) => p !== '');
  }

  private encodePlain(text: string, sectionIndex: number): number[] {
    const lib = this.lib;
    if (!lib.model) throw new TokenizerFilesError(`${this.name}: tokenizer.json has no model`);
    const normalized = lib.normalizer ? lib.normalizer(text) : text;
    if (normalized.length === 0) return [];
    const words = lib.pre_tokenizer ? lib.pre_tokenizer(normalized, { section_index: sectionIndex }) : [normalized];
    const model = lib.model;
    return model(words).map((t) => {
      const id = model.tokens_to_ids.get(t) ?? model.unk_token_id;
      if (id === undefined) throw new TokenizerFilesError(`${this.name}: the model produced token ${JSON.stringify(t)}, which has no id`);
      return id;
    });
  }

  decode(ids: readonly number[]): string {
    if (ids.length === 0) return '';
    for (const id of ids) {
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) throw new RangeError(`${this.name}: token id ${id} is outside the vocabulary (0..${this.vocabSize - 1})`);
    }
    return this.lib.decode([...ids], { clean_up_tokenization_spaces: this.cleanUpSpaces });
  }

  specialTokenId(text: string): number | undefined {
    return this.addedByContent.get(text)?.id;
  }

  isSpecial(id: number): boolean {
    return this.specialIds.has(id);
  }
}

/** Parses a tokenizer file's text, naming the file when it is not JSON. */
function readJson(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new TokenizerFilesError(`cannot read ${file}: ${errorMessage(e)}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new TokenizerFilesError(`${file} is not valid JSON (${errorMessage(e)}); delete it to download it again`);
  }
}

// Building one costs 0.5–1.2 s and 150–210 MB: one instance per file set for the whole process.
const instances = new Map<string, HfTokenizer>();

/** The tokenizer in `dir` (tokenizer.json + tokenizer_config.json), built once per process. */
export function loadHfTokenizer(name: string, dir: string): HfTokenizer {
  const tokenizerFile = path.resolve(dir, 'tokenizer.json');
  const configFile = path.resolve(dir, 'tokenizer_config.json');
  const stamp = (f: string) => {
    try {
      const st = fs.statSync(f);
      return `${st.size}:${st.mtimeMs}`;
    } catch {
      return 'missing';
    }
  };
  const key = `${name}\0${tokenizerFile}\0${stamp(tokenizerFile)}\0${stamp(configFile)}`;
  const cached = instances.get(key);
  if (cached) return cached;
  const tok = new HfTokenizer(name, readJson(tokenizerFile), readJson(configFile), dir);
  instances.set(key, tok);
  return tok;
}
