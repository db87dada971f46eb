// Generation with a KV cache over merged weights (base + LoRA folded in). All samples of one request
// decode in lockstep so each step is a small GEMM rather than many vector products.
import { GptConfig, Params, Rng } from './gpt';
import { Arr, gelu, layerNorm, logSoftmaxRow, matmul, matmulBT } from './ops';

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

/** Runs the model over a prefix and returns per-layer K and V (L×d each) and the last hidden log-probs. */
class KvModel {
  constructor(
    readonly c: GptConfig,
    readonly w: Params,
  ) {}

  private get(name: string): Float32Array {
    return this.w.get(name) as Float32Array;
  }

  /**
   * Processes `n` new tokens for each of `S` streams whose caches hold `past` positions (the same for
   * all). Appends to the caches and returns log-probs (S×n×V) of the next token at each new position.
   */
  step(tokens: Int32Array, S: number, n: number, past: number, kCache: Arr[][], vCache: Arr[][]): Float32Array {
    const { d, nHead, ffn, vocabSize: V } = this.c;
    const T = S * n;
    const hd = d / nHead;
    const invSqrt = 1 / Math.sqrt(hd);
    const tok = this.get('tok');
    const pos = this.get('pos');
    let x = new Float32Array(T * d);
    for (let s = 0; s < S; s++)
      for (let i = 0; i < n; i++) {
        const t = s * n + i;
        const to = tokens[t]! * d;
        const po = (past + i) * d;
        for (let j = 0; j < d; j++) x[t * d + j] = tok[to + j]! + pos[po + j]!;
      }
    const mean = new Float32Array(T);
    const rstd = new Float32Array(T);
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
      const attn = new Float32Array(T * d);
      for (let s = 0; s < S; s++) {
        const K = kCache[l]![s]!;
        const Vc = vCache[l]![s]!;
        K.set(k.subarray(s * n * d, (s + 1) * n * d), past * d);
        Vc.set(v.subarray(s * n * d, (s + 1) * n * d), past * d);
        for (let i = 0; i < n; i++) {
          const upto = past + i;
          const qi = (s * n + i) * d;
          for (let h = 0; h < nHead; h++) {
            const scores = new Float64Array(upto + 1);
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
    const lnf = new Float32Array(T * d);
    layerNorm(x, this.get('lnf.g'), this.get('lnf.b'), lnf, mean, rstd, T, d);
    const logits = new Float32Array(T * V);
    matmulBT(lnf, this.w.get('unembed') ?? tok, logits, T, V, d);
    for (let t = 0; t < T; t++) logSoftmaxRow(logits, t * V, V);
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

export class Sampler {
  private readonly model: KvModel;

  constructor(
    readonly c: GptConfig,
    merged: Params,
  ) {
    this.model = new KvModel(c, merged);
  }

  /** Log-probs of every prompt token given its prefix (NaN first), and optionally the top k per position. */
  promptLogprobs(prompt: Int32Array, topk: number): { logprobs: Float32Array; topk?: Array<Array<[number, number]> | null> } {
    const { d, vocabSize: V } = this.c;
    const L = prompt.length;
    const kc = Array.from({ length: this.c.nLayer }, () => [new Float32Array(L * d)]);
    const vc = Array.from({ length: this.c.nLayer }, () => [new Float32Array(L * d)]);
    const lp = this.model.step(prompt, 1, L, 0, kc, vc);
    const out = new Float32Array(L).fill(NaN);
    for (let i = 1; i < L; i++) out[i] = lp[(i - 1) * V + prompt[i]!]!;
    let top: Array<Array<[number, number]> | null> | undefined;
    if (topk > 0) {
      top = [null];
      for (let i = 1; i < L; i++) {
        const row = Array.from({ length: V }, (_, j) => [j, lp[(i - 1) * V + j]!] as [number, number]).sort((a, b) => b[1] - a[1]);
        top.push(row.slice(0, topk));
      }
    }
    return { logprobs: out, topk: top };
  }

  /** Generates `numSamples` continuations of `prompt`. */
  generate(prompt: Int32Array, numSamples: number, p: DecodeParams): DecodedSequence[] {
    const { d, vocabSize: V, ctx } = this.c;
    const L = prompt.length;
    if (L === 0) throw new Error('the prompt is empty');
    if (L >= ctx) throw new Error(`the prompt has ${L} tokens; the model's context is ${ctx}`);
    for (const t of prompt) if (!(t >= 0 && t < V)) throw new Error(`prompt token id ${t} is outside the vocabulary (0..${V - 1})`);
    const maxNew = Math.min(p.maxTokens, ctx - L);
    const S = numSamples;
    const total = L + maxNew;
    // prefill once, then copy the prompt's cache to every sample
    const k1 = Array.from({ length: this.c.nLayer }, () => [new Float32Array(total * d)]);
    const v1 = Array.from({ length: this.c.nLayer }, () => [new Float32Array(total * d)]);
    const prefill = this.model.step(prompt, 1, L, 0, k1, v1);
    const kCache = k1.map(([k]) => Array.from({ length: S }, () => Float32Array.from(k!)));
    const vCache = v1.map(([v]) => Array.from({ length: S }, () => Float32Array.from(v!)));
    const last = prefill.subarray((L - 1) * V, L * V);
    const rngs = Array.from({ length: S }, (_, s) => new Rng((p.seed + Math.imul(s, 0x9e3779b1)) >>> 0));
    const seqs: DecodedSequence[] = Array.from({ length: S }, () => ({ tokens: [], logprobs: [], stopReason: 'length' as const }));
    const bytes: number[][] = Array.from({ length: S }, () => []);
    const done = new Array<boolean>(S).fill(false);
    let lps: Float32Array = new Float32Array(S * V);
    for (let s = 0; s < S; s++) lps.set(last, s * V);
    for (let step = 0; step < maxNew; step++) {
      const next = new Int32Array(S);
      for (let s = 0; s < S; s++) {
        if (done[s]) continue;
        const [t, lp] = pick(lps, s * V, V, p, rngs[s]!);
        seqs[s]!.tokens.push(t);
        seqs[s]!.logprobs.push(lp);
        next[s] = t;
        if (t < 256) bytes[s]!.push(t);
        if (t === p.eosToken || p.stopTokens.includes(t) || p.stopBytes.some((b) => endsWith(bytes[s]!, b))) {
          done[s] = true;
          seqs[s]!.stopReason = 'stop';
        }
      }
      if (done.every(Boolean) || step === maxNew - 1) break;
      // finished streams keep decoding a harmless token so the batch stays rectangular
      lps = this.model.step(next, S, 1, L + step, kCache, vCache);
    }
    return seqs;
  }
}
