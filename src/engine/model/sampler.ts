// Generation with a KV cache over merged weights (base + LoRA folded in). All streams of a batch —
// every sample of every request given together — decode in lockstep, each at its own position, so
// each step is one GEMM over the batch rather than many vector products. A stream's tokens and
// log-probs do not depend on which other requests share its batch.
import { GptConfig, Params, Rng } from './gptWeights';
import { applyRope } from './rope';
import { gelu, layerNorm, logSoftmaxRow, matmul } from './ops';

export interface DecodeParams {
  maxTokens: number;
  temperature: number;
  topP: number;
  topK: number;
  stopTokens: number[];
  /** stop strings as UTF-8 bytes */
  stopBytes: Uint8Array[];
  eosToken: number;
  seed: number;
}

export interface DecodedSequence {
  tokens: number[];
  logprobs: number[];
  stopReason: 'stop' | 'length';
}

/** One stream's key/value cache: per layer, positions × d. */
interface StreamCache {
  k: Float32Array[];
  v: Float32Array[];
}

/** Runs the model over new tokens of many streams, each at its own position, with KV caches. */
export class KvModel {
  /** the unembedding as d×V, so logits go through the GEMM path whose rows do not depend on each other */
  private readonly unembedT: Float32Array;

  constructor(
    readonly c: GptConfig,
    readonly w: Params,
  ) {
    const { d, vocabSize: V } = c;
    const u = (w.get('unembed') ?? w.get('tok')) as Float32Array;
    this.unembedT = new Float32Array(d * V);
    for (let t = 0; t < V; t++) for (let j = 0; j < d; j++) this.unembedT[j * V + t] = u[t * d + j]!;
  }

  private get(name: string): Float32Array {
    return this.w.get(name) as Float32Array;
  }

  /**
   * Processes `lens[s]` new tokens of stream `s` (concatenated in `tokens`), whose cache holds
   * `pasts[s]` positions; appends to the caches. Returns log-probs of the next token: at every new
   * position ('all', Σlens × V) or at each stream's last one ('last', S × V). Every row is computed
   * on its own (no reduction across rows), so a stream's results do not depend on its batch-mates.
   */
  step(tokens: Int32Array, lens: readonly number[], pasts: readonly number[], caches: readonly StreamCache[], rows: 'all' | 'last'): Float32Array {
    const { d, nHead, ffn, vocabSize: V } = this.c;
    const S = lens.length;
    const T = tokens.length;
    const hd = d / nHead;
    const invSqrt = 1 / Math.sqrt(hd);
    const tok = this.get('tok');
    const pos = this.c.rope ? undefined : this.get('pos');
    const starts = new Int32Array(S + 1);
    for (let s = 0; s < S; s++) starts[s + 1] = starts[s]! + lens[s]!;
    let x = new Float32Array(T * d);
    // RoPE models (GptConfig.rope): each new row's position, for the rotation of its query and key
    const positions = this.c.rope ? new Int32Array(T) : undefined;
    for (let s = 0; s < S; s++)
      for (let i = 0; i < lens[s]!; i++) {
        const t = starts[s]! + i;
        const to = tokens[t]! * d;
        if (positions) positions[t] = pasts[s]! + i;
        if (pos) {
          const po = (pasts[s]! + i) * d;
          for (let j = 0; j < d; j++) x[t * d + j] = tok[to + j]! + pos[po + j]!;
        } else for (let j = 0; j < d; j++) x[t * d + j] = tok[to + j]!;
      }
    const mean = new Float32Array(T);
    const rstd = new Float32Array(T);
    let scores = new Float64Array(64);
    for (let l = 0; l < this.c.nLayer; l++) {
      const p = `h${l}.`;
      const ln1 = new Float32Array(T * d);
      layerNorm(x, this.get(p + 'ln1.g'), this.get(p + 'ln1.b'), ln1, mean, rstd, T, d);
      const q = new Float32Array(T * d);
      const k = new Float32Array(T * d);
      const v = new Float32Array(T * d);
      matmul(ln1, this.get(p + 'wq'), q, T, d, d);
      matmul(ln1, this.get(p + 'wk'), k, T, d, d);
      matmul(ln1, this.get(p + 'wv'), v, T, d, d);
      if (positions) {
        applyRope(q, positions, d, nHead, this.c.ctx);
        applyRope(k, positions, d, nHead, this.c.ctx);
      }
      const attn = new Float32Array(T * d);
      for (let s = 0; s < S; s++) {
        const K = caches[s]!.k[l]!;
        const Vc = caches[s]!.v[l]!;
        const at = starts[s]!;
        const n = lens[s]!;
        const past = pasts[s]!;
        K.set(k.subarray(at * d, (at + n) * d), past * d);
        Vc.set(v.subarray(at * d, (at + n) * d), past * d);
        if (scores.length < past + n) scores = new Float64Array(2 * (past + n));
        for (let i = 0; i < n; i++) {
          const upto = past + i;
          const qi = (at + i) * d;
          for (let h = 0; h < nHead; h++) {
            let max = -Infinity;
            for (let j = 0; j <= upto; j++) {
              let dot = 0;
              for (let e = 0; e < hd; e++) dot += q[qi + h * hd + e]! * K[j * d + h * hd + e]!;
              scores[j] = dot * invSqrt;
              if (scores[j]! > max) max = scores[j]!;
            }
            let sum = 0;
            for (let j = 0; j <= upto; j++) {
              scores[j] = Math.exp(scores[j]! - max);
              sum += scores[j]!;
            }
            for (let j = 0; j <= upto; j++) {
              const pj = scores[j]! / sum;
              for (let e = 0; e < hd; e++) attn[qi + h * hd + e] += pj * Vc[j * d + h * hd + e]!;
            }
          }
        }
      }
      const o = new Float32Array(T * d);
      matmul(attn, this.get(p + 'wo'), o, T, d, d);
      for (let i = 0; i < x.length; i++) o[i] += x[i]!;
      const ln2 = new Float32Array(T * d);
      layerNorm(o, this.get(p + 'ln2.g'), this.get(p + 'ln2.b'), ln2, mean, rstd, T, d);
      const up = new Float32Array(T * ffn);
      matmul(ln2, this.get(p + 'w1'), up, T, ffn, d);
      gelu(up, up, T * ffn);
      const down = new Float32Array(T * d);
      matmul(up, this.get(p + 'w2'), down, T, d, ffn);
      for (let i = 0; i < down.length; i++) down[i] += o[i]!;
      x = down;
    }
    // only the rows asked for go through the final norm and the unembedding
    let R = T;
    if (rows === 'last' && S !== T) {
      R = S;
      const last = new Float32Array(S * d);
      for (let s = 0; s < S; s++) last.set(x.subarray((starts[s + 1]! - 1) * d, starts[s + 1]! * d), s * d);
      x = last;
    }
    const lnf = new Float32Array(R * d);
    layerNorm(x, this.get('lnf.g'), this.get('lnf.b'), lnf, mean, rstd, R, d);
    const logits = new Float32Array(R * V);
    matmul(lnf, this.unembedT, logits, R, V, d);
    for (let t = 0; t < R; t++) logSoftmaxRow(logits, t * V, V);
    return logits;
  }
}

function endsWith(bytes: number[], suffix: Uint8Array): boolean {
  if (suffix.length === 0 || bytes.length < suffix.length) return false;
  for (let i = 0; i < suffix.length; i++) if (bytes[bytes.length - suffix.length + i] !== suffix[i]) return false;
  return true;
}

/**
 * Picks a token from the model's log-probs `lp[off..off+V)` and returns it with its log-prob under
 * the distribution it was drawn from: softmax(lp / temperature), cut to the top_k most likely tokens,
 * then to the smallest prefix (most likely first) whose mass reaches top_p, and renormalised. So the
 * reported log-prob is what an importance ratio needs; at temperature 1 without truncation it is the
 * model's, equal to the trainer's. Greedy (temperature 0) reports the model's own log-prob, as a
 * point mass would say nothing.
 */
export function pick(lp: Float32Array, off: number, V: number, p: Pick<DecodeParams, 'temperature' | 'topK' | 'topP'>, rng: Rng): [number, number] {
  if (p.temperature === 0) {
    let best = 0;
    for (let i = 1; i < V; i++) if (lp[off + i]! > lp[off + best]!) best = i;
    return [best, lp[off + best]!];
  }
  const probs = new Float64Array(V);
  let max = -Infinity;
  for (let i = 0; i < V; i++) {
    probs[i] = lp[off + i]! / p.temperature;
    if (probs[i]! > max) max = probs[i]!;
  }
  let sum = 0;
  for (let i = 0; i < V; i++) {
    probs[i] = Math.exp(probs[i]! - max);
    sum += probs[i]!;
  }
  for (let i = 0; i < V; i++) probs[i] = probs[i]! / sum;
  const truncK = p.topK > 0 && p.topK < V;
  const truncP = p.topP < 1;
  if (!truncK && !truncP) {
    let u = rng.next();
    for (let i = 0; i < V; i++) {
      u -= probs[i]!;
      if (u <= 0) return [i, Math.log(probs[i]!)];
    }
    return [V - 1, Math.log(probs[V - 1]!)];
  }
  // ties keep the lower id first, so the cut is deterministic
  let pool = Array.from({ length: V }, (_, i) => i).sort((a, b) => probs[b]! - probs[a]! || a - b);
  if (truncK) pool = pool.slice(0, p.topK);
  if (truncP) {
    let acc = 0;
    let keep = 0;
    while (keep < pool.length) {
      acc += probs[pool[keep]!]!;
      keep++;
      if (acc >= p.topP) break;
    }
    pool = pool.slice(0, keep);
  }
  let mass = 0;
  for (const i of pool) mass += probs[i]!;
  let u = rng.next() * mass;
  for (const i of pool) {
    u -= probs[i]!;
    if (u <= 0) return [i, Math.log(probs[i]! / mass)];
  }
  const last = pool[pool.length - 1]!;
  return [last, Math.log(probs[last]! / mass)];
}

/** One generation request of a batch. */
export interface GenerationRequest {
  prompt: Int32Array;
  numSamples: number;
  params: DecodeParams;
  /** also the log-prob of every prompt token given its prefix, and the top `topk` per position when topk > 0 */
  promptLogprobs?: { topk: number };
}

export interface PromptLogprobs {
  /** one per prompt token, NaN for the first (it has no prefix) */
  logprobs: Float32Array;
  /** null for the first token */
  topk?: Array<Array<[number, number]> | null>;
}

/** What one request gets: its samples, and the prompt's log-probs when it asked for them. */
export interface Generation {
  sequences: DecodedSequence[];
  prompt?: PromptLogprobs;
}

/** A distinct prompt of a batch, prefilled once for every request that has it. */
interface Prefill {
  prompt: Int32Array;
  /** the requests with this prompt */
  reqs: number[];
  /** the stream whose cache the prefill fills (the others copy it); undefined when no request samples */
  stream: number | undefined;
  /** that stream's cache, or one of the prompt's length */
  cache?: StreamCache;
  /** the log-prob rows of every prompt position are kept (some request asked for prompt log-probs) */
  all: boolean;
  /** the next-token row after the prompt */
  last?: Float32Array;
  /** rows of every position, kept until the requests' top-k are read */
  rows?: Float32Array;
}

/** prompt tokens prefilled per model call, to bound the activations' memory */
const PREFILL_TOKENS = 4096;

interface Stream {
  req: number;
  cache: StreamCache;
  rng: Rng;
  seq: DecodedSequence;
  bytes: number[];
  maxNew: number;
}

export class Sampler {
  private readonly model: KvModel;

  constructor(
    readonly c: GptConfig,
    merged: Params,
  ) {
    this.model = new KvModel(c, merged);
  }

  private newCache(positions: number): StreamCache {
    const n = positions * this.c.d;
    return { k: Array.from({ length: this.c.nLayer }, () => new Float32Array(n)), v: Array.from({ length: this.c.nLayer }, () => new Float32Array(n)) };
  }

  /** Generates `numSamples` continuations of `prompt`. */
  generate(prompt: Int32Array, numSamples: number, p: DecodeParams): DecodedSequence[] {
    const [r] = this.generateMany([{ prompt, numSamples, params: p }]);
    if (r instanceof Error) throw r;
    return r!;
  }

  /** serve() without the prompt log-probs: each request's sequences, or its Error. */
  generateMany(reqs: readonly GenerationRequest[]): Array<DecodedSequence[] | Error> {
    return this.serve(reqs).map((r) => (r instanceof Error ? r : r.sequences));
  }

  /** Why a request cannot be served, or undefined. */
  private check(prompt: Int32Array): Error | undefined {
    const { vocabSize: V, ctx } = this.c;
    const L = prompt.length;
    if (L === 0) return new Error('the prompt is empty');
    if (L >= ctx) return new Error(`the prompt has ${L} tokens; the model's context is ${ctx}`);
    for (const t of prompt) if (!(t >= 0 && t < V)) return new Error(`prompt token id ${t} is outside the vocabulary (0..${V - 1})`);
    return undefined;
  }

  /**
   * Serves many requests as one batch: prompts prefilled together, then every sample of every
   * request decoded in lockstep. Each result is the request's sequences (and its prompt's log-probs
   * when asked for), or the Error that request alone failed with. Sample `s` of a request draws from
   * its own generator seeded by (seed, s), so a request's result is the same whatever else shares
   * the batch. A prompt is run through the model once, whether its log-probs are asked for or not.
   */
  serve(reqs: readonly GenerationRequest[]): Array<Generation | Error> {
    const { vocabSize: V, ctx } = this.c;
    const results: Array<Generation | Error> = reqs.map((r) => this.check(r.prompt) ?? { sequences: [] });
    const streams: Stream[] = [];
    const firsts: number[] = [];
    reqs.forEach((r, i) => {
      const out = results[i]!;
      if (out instanceof Error) return;
      const L = r.prompt.length;
      const maxNew = Math.max(0, Math.min(r.params.maxTokens, ctx - L));
      firsts[i] = streams.length;
      for (let s = 0; s < r.numSamples; s++) {
        const seq: DecodedSequence = { tokens: [], logprobs: [], stopReason: 'length' };
        out.sequences.push(seq);
        streams.push({ req: i, cache: this.newCache(L + maxNew), rng: new Rng((r.params.seed + Math.imul(s, 0x9e3779b1)) >>> 0), seq, bytes: [], maxNew });
      }
    });
    // each distinct prompt is prefilled once: into the cache of its first request's first stream
    // (every other stream of that prompt copies the cache and the next-token row), or into a cache
    // of its own when only its log-probs are wanted
    const byPrompt = new Map<string, Prefill>();
    reqs.forEach((r, i) => {
      if (results[i] instanceof Error || (r.numSamples === 0 && !r.promptLogprobs)) return;
      const key = r.prompt.join(',');
      let p = byPrompt.get(key);
      if (!p) byPrompt.set(key, (p = { prompt: r.prompt, reqs: [], stream: undefined, all: false }));
      p.reqs.push(i);
      if (p.stream === undefined && r.numSamples > 0) p.stream = firsts[i];
      if (r.promptLogprobs) p.all = true;
    });
    const prefills = [...byPrompt.values()];
    for (const p of prefills) p.cache = p.stream === undefined ? this.newCache(p.prompt.length) : streams[p.stream]!.cache;
    // in chunks of whole prompts, the ones whose every row is kept apart from the others
    for (const group of [prefills.filter((p) => !p.all), prefills.filter((p) => p.all)]) {
      for (let a = 0; a < group.length; ) {
        let b = a;
        let n = 0;
        while (b < group.length && (b === a || n + group[b]!.prompt.length <= PREFILL_TOKENS)) n += group[b++]!.prompt.length;
        const chunk = group.slice(a, b);
        const tokens = new Int32Array(n);
        let at = 0;
        for (const p of chunk) {
          tokens.set(p.prompt, at);
          at += p.prompt.length;
        }
        const all = chunk[0]!.all;
        const out = this.model.step(
          tokens,
          chunk.map((p) => p.prompt.length),
          chunk.map(() => 0),
          chunk.map((p) => p.cache!),
          all ? 'all' : 'last',
        );
        at = 0;
        chunk.forEach((p, c) => {
          const L = p.prompt.length;
          if (all) {
            p.rows = out.subarray(at * V, (at + L) * V);
            p.last = p.rows.subarray((L - 1) * V, L * V);
          } else p.last = out.subarray(c * V, (c + 1) * V);
          at += L;
        });
        a = b;
      }
    }
    const lps = new Float32Array(streams.length * V);
    for (const p of prefills) {
      const L = p.prompt.length;
      for (const i of p.reqs) {
        const r = reqs[i]!;
        for (let s = 0; s < r.numSamples; s++) {
          const to = firsts[i]! + s;
          lps.set(p.last!, to * V);
          if (to === p.stream) continue;
          const st = streams[to]!;
          for (let l = 0; l < this.c.nLayer; l++) {
            st.cache.k[l]!.set(p.cache!.k[l]!.subarray(0, L * this.c.d));
            st.cache.v[l]!.set(p.cache!.v[l]!.subarray(0, L * this.c.d));
          }
        }
        if (r.promptLogprobs) (results[i] as Generation).prompt = promptLogprobsOf(p, r.promptLogprobs.topk, V);
      }
      p.rows = undefined;
    }
    let active = streams.map((_, i) => i).filter((i) => streams[i]!.maxNew > 0);
    let rows: Float32Array = lps;
    let rowOf = new Map(active.map((i) => [i, i]));
    while (active.length > 0) {
      const next: number[] = [];
      for (const i of active) {
        const st = streams[i]!;
        const p = reqs[st.req]!.params;
        const [t, lp] = pick(rows, rowOf.get(i)! * V, V, p, st.rng);
        st.seq.tokens.push(t);
        st.seq.logprobs.push(lp);
        if (t < 256) st.bytes.push(t);
        if (t === p.eosToken || p.stopTokens.includes(t) || p.stopBytes.some((b) => endsWith(st.bytes, b))) st.seq.stopReason = 'stop';
        else if (st.seq.tokens.length < st.maxNew) next.push(i);
      }
      active = next;
      if (active.length === 0) break;
      const tokens = Int32Array.from(active, (i) => streams[i]!.seq.tokens[streams[i]!.seq.tokens.length - 1]!);
      rows = this.model.step(
        tokens,
        active.map(() => 1),
        active.map((i) => reqs[streams[i]!.req]!.prompt.length + streams[i]!.seq.tokens.length - 1),
        active.map((i) => streams[i]!.cache),
        'last',
      );
      rowOf = new Map(active.map((i, r) => [i, r]));
    }
    return results;
  }
}

/** A prefilled prompt's log-probs (NaN first) from its rows, with the top k per position when k > 0. */
function promptLogprobsOf(p: Prefill, topk: number, V: number): PromptLogprobs {
  const { prompt, rows } = p;
  const L = prompt.length;
  const logprobs = new Float32Array(L).fill(NaN);
  for (let i = 1; i < L; i++) logprobs[i] = rows![(i - 1) * V + prompt[i]!]!;
  if (topk <= 0) return { logprobs };
  const top: Array<Array<[number, number]> | null> = [null];
  for (let i = 1; i < L; i++) {
    const row = Array.from({ length: V }, (_, j) => [j, rows![(i - 1) * V + j]!] as [number, number]).sort((a, b) => b[1] - a[1]);
    top.push(row.slice(0, topk));
  }
  return { logprobs, topk: top };
}
