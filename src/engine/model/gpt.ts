// A small GPT-style causal language model with LoRA adapters, written out by hand: pre-LN blocks of
// causal multi-head attention and a GELU MLP, learned or rotary positions, an unembedding tied to the token
// embedding. Forward keeps what backward needs; backward fills gradients of whatever is trainable
// (the LoRA adapters, or every base weight in full-training mode used for pretraining).
import { Arr, layerNormBackward, matmul, matmulAT, matmulBT } from './ops';
import { applyRope } from './rope';
import type { GptConfig, LoraSpec, Params } from './gptWeights';
import { parallelFor } from '../compute';
import {
  attnBackwardTask,
  attnForwardTask,
  dlogitsTask,
  elementwiseTask,
  geluBackwardTask,
  geluTask,
  layerNormBackwardTask,
  layerNormTask,
  logSoftmaxTask,
} from '../compute/tasks';


/**
 * Hands out arrays of n elements: zeroed, or with `zeroed` false, with any contents (an array the
 * next operation writes whole: a GEMM without accumulate, a layer norm, an elementwise task, a
 * copy). The engine's arena reuses the kernel's memory; zeroing every array there cost 95 M
 * element writes per demo-sized forward_backward, 7 % of it at 2 threads (serial and bound by
 * memory bandwidth).
 */
export type Alloc = (n: number, zeroed?: boolean) => Arr;

/** Where the arrays of `alloc` can be given back early: everything allocated after a mark. */
export interface Scratch {
  mark(): number;
  releaseTo(mark: number): void;
}

interface LinearCache {
  x: Arr;
  xa?: Arr;
}

interface LayerCache {
  xIn: Arr;
  ln1: Arr;
  ln1Mean: Arr;
  ln1Rstd: Arr;
  q: Arr;
  k: Arr;
  v: Arr;
  /** attention probabilities: per sequence, per head, L×(parent length + L) (see attnMeta) */
  probs: Arr;
  attnOut: Arr;
  lin: Record<string, LinearCache>;
  h: Arr;
  ln2: Arr;
  ln2Mean: Arr;
  ln2Rstd: Arr;
  up: Arr;
  act: Arr;
}

export interface ForwardResult {
  /** T×V log-probabilities (row t: distribution of the token after position t) */
  logprobs: Arr;
  cache: {
    layers: LayerCache[];
    xFinal: Arr;
    lnf: Arr;
    lnfMean: Arr;
    lnfRstd: Arr;
    unembedXa?: Arr;
    tokens: Int32Array;
    seqStarts: number[];
    seqLens: number[];
    /** per sequence: the positions before its first token (its parent's length, 0 for a root) */
    offsets: number[];
    /** per sequence: the first row of the parent it continues (0 for a root) */
    parentStarts: number[];
    /** per sequence: start, length, offset, parent start, first probs index (attention tasks) */
    attnMeta: Int32Array;
    /** longest attended width (offset + length) */
    maxWidth: number;
    /**
     * the sequences by family (a root and the sequences continuing it, in ascending order; families
     * by root): nFamilies + 1 starts, then the sequence indices (attnBackwardTask)
     */
    attnFamilies: Int32Array;
    nFamilies: number;
    /** per row: its position (RoPE models only) */
    positions?: Int32Array;
  };
}

// The non-GEMM loops run as compute tasks (src/engine/compute/tasks.ts), split over the GEMM helper
// thread when there is one; every output is computed by one thread in a fixed order, so results do
// not depend on the thread count.

/** c = x + α·y elementwise (α = 1: an exact sum) */
function addScaled(c: Arr, x: Arr, y: Arr, alpha: number, n: number): void {
  parallelFor(elementwiseTask, n, [x, y], [c], [0, alpha]);
}

/** x ·= α elementwise */
function scaleInPlace(x: Arr, alpha: number, n: number): void {
  parallelFor(elementwiseTask, n, [], [x], [2, alpha]);
}

function layerNormRows(x: Arr, g: Arr, b: Arr, y: Arr, mean: Arr, rstd: Arr, rows: number, d: number): void {
  parallelFor(layerNormTask, rows, [x, g, b], [y, mean, rstd], [d]);
}

/** dx += LN backward; g and b gradients (accumulated over rows, in row order) on this thread. */
function layerNormBackwardRows(dy: Arr, x: Arr, g: Arr, mean: Arr, rstd: Arr, dx: Arr, dg: Arr | undefined, db: Arr | undefined, rows: number, d: number): void {
  if (dg || db) layerNormBackward(dy, x, g, mean, rstd, dx, dg, db, rows, d);
  else parallelFor(layerNormBackwardTask, rows, [dy, x, g, mean, rstd], [dx], [d]);
}

/**
 * The sequences grouped by family: each root sequence (parent −1) with the sequences continuing it,
 * in ascending order, families in the order of their roots. `families` holds count + 1 starts into
 * the list of sequence indices that follows them.
 */
export function sequenceFamilies(parents: readonly number[]): { families: Int32Array; count: number } {
  const members = new Map<number, number[]>();
  parents.forEach((p, si) => {
    if (p === -1) members.set(si, [si]);
    else members.get(p)!.push(si);
  });
  const count = members.size;
  const families = new Int32Array(count + 1 + parents.length);
  let f = 0;
  let at = 0;
  for (const list of members.values()) {
    families[f++] = at;
    for (const si of list) families[count + 1 + at++] = si;
  }
  families[count] = at;
  return { families, count };
}

export class Gpt {
  readonly scale: number;

  constructor(
    readonly c: GptConfig,
    readonly base: Params,
    readonly lora: Params | undefined,
    readonly loraSpec: LoraSpec | undefined,
    readonly alloc: Alloc,
    private readonly scratch?: Scratch,
  ) {
    this.scale = loraSpec ? loraSpec.alpha / loraSpec.rank : 0;
  }

  /** an array the next operation writes whole (see Alloc) */
  private fresh(n: number): Arr {
    return this.alloc(n, false);
  }

  private w(name: string): Arr {
    const a = this.base.get(name);
    if (!a) throw new Error(`missing weight ${name}`);
    return a;
  }

  private adapter(name: string): { A: Arr; B: Arr } | undefined {
    const A = this.lora?.get(`${name}.A`);
    const B = this.lora?.get(`${name}.B`);
    return A && B ? { A, B } : undefined;
  }

  private linear(name: string, x: Arr, T: number, din: number, dout: number, cache: Record<string, LinearCache>): Arr {
    const y = this.fresh(T * dout);
    matmul(x, this.w(name), y, T, dout, din);
    const ad = this.adapter(name);
    const entry: LinearCache = { x };
    if (ad) {
      const r = this.loraSpec!.rank;
      const xa = this.fresh(T * r);
      matmul(x, ad.A, xa, T, r, din);
      const t = this.fresh(T * dout);
      matmul(xa, ad.B, t, T, dout, r);
      addScaled(y, y, t, this.scale, y.length);
      entry.xa = xa;
    }
    cache[name] = entry;
    return y;
  }

  /** dx (T×din) of a linear; accumulates weight/adapter gradients into `grads` where present. */
  private linearBackward(name: string, dy: Arr, T: number, din: number, dout: number, cache: Record<string, LinearCache>, grads: Params): Arr {
    const { x, xa } = cache[name]!;
    const dx = this.fresh(T * din);
    matmulBT(dy, this.w(name), dx, T, din, dout);
    const gW = grads.get(name);
    if (gW) matmulAT(x, dy, gW, din, dout, T, true);
    const ad = this.adapter(name);
    if (ad && xa) {
      const r = this.loraSpec!.rank;
      const dxa = this.fresh(T * r);
      matmulBT(dy, ad.B, dxa, T, r, dout);
      scaleInPlace(dxa, this.scale, dxa.length);
      const gB = grads.get(`${name}.B`);
      if (gB) {
        const tmp = this.fresh(r * dout);
        matmulAT(xa, dy, tmp, r, dout, T);
        for (let i = 0; i < tmp.length; i++) gB[i] += this.scale * tmp[i]!;
      }
      const gA = grads.get(`${name}.A`);
      if (gA) matmulAT(x, dxa, gA, din, r, T, true);
      // dx += dxa · Aᵀ
      const t2 = this.fresh(T * din);
      matmulBT(dxa, ad.A, t2, T, din, r);
      addScaled(dx, dx, t2, 1, dx.length);
    }
    return dx;
  }

  /**
   * Forward over sequences (token ids concatenated; `seqLens` their lengths). Returns log-probs of
   * every next token at every position and the cache for backward. `parents[s]`, where given and not
   * -1, names an earlier root sequence that sequence s continues: s's positions start after it and
   * attend to it, so a prefix shared by several sequences is computed once (causal attention: the
   * prefix's activations do not depend on what follows it).
   */
  forward(tokens: Int32Array, seqLens: number[], parents: number[] = seqLens.map(() => -1)): ForwardResult {
    const { d, nHead, ffn, vocabSize: V, ctx } = this.c;
    const T = tokens.length;
    const seqStarts: number[] = [];
    let at = 0;
    if (parents.length !== seqLens.length) throw new Error('one parent per sequence is required');
    const offsets: number[] = [];
    const parentStarts: number[] = [];
    seqLens.forEach((L, si) => {
      const p = parents[si]!;
      if (p !== -1 && !(p >= 0 && p < si && parents[p] === -1)) throw new Error(`sequence ${si}: parent ${p} is not an earlier root sequence`);
      const off = p === -1 ? 0 : seqLens[p]!;
      if (off + L > ctx) throw new Error(`a sequence of ${off + L} tokens is longer than the model's context of ${ctx}`);
      offsets.push(off);
      parentStarts.push(p === -1 ? 0 : seqStarts[p]!);
      seqStarts.push(at);
      at += L;
    });
    if (at !== T) throw new Error('sequence lengths do not add up to the number of tokens');
    for (let t = 0; t < T; t++) {
      const id = tokens[t]!;
      if (!(id >= 0 && id < V)) throw new Error(`token id ${id} is outside the vocabulary (0..${V - 1})`);
    }
    const tok = this.w('tok');
    const pos = this.c.rope ? undefined : this.w('pos');
    const positions = this.c.rope ? new Int32Array(T) : undefined;
    let x = this.fresh(T * d);
    seqStarts.forEach((s, si) => {
      for (let i = 0; i < seqLens[si]!; i++) {
        const t = s + i;
        const to = tokens[t]! * d;
        if (positions) positions[t] = offsets[si]! + i;
        if (pos) {
          const po = (offsets[si]! + i) * d;
          for (let j = 0; j < d; j++) x[t * d + j] = tok[to + j]! + pos[po + j]!;
        } else for (let j = 0; j < d; j++) x[t * d + j] = tok[to + j]!;
      }
    });
    const layers: LayerCache[] = [];
    const hd = d / nHead;
    const invSqrt = 1 / Math.sqrt(hd);
    const attnMeta = new Int32Array(seqLens.length * 5);
    let probsLen = 0;
    let maxWidth = 0;
    seqLens.forEach((L, si) => {
      const W = offsets[si]! + L;
      attnMeta.set([seqStarts[si]!, L, offsets[si]!, parentStarts[si]!, probsLen], si * 5);
      probsLen += nHead * L * W;
      maxWidth = Math.max(maxWidth, W);
    });
    for (let l = 0; l < this.c.nLayer; l++) {
      const p = `h${l}.`;
      const lin: Record<string, LinearCache> = {};
      const ln1 = this.fresh(T * d);
      const ln1Mean = this.fresh(T);
      const ln1Rstd = this.fresh(T);
      layerNormRows(x, this.w(p + 'ln1.g'), this.w(p + 'ln1.b'), ln1, ln1Mean, ln1Rstd, T, d);
      const q = this.linear(p + 'wq', ln1, T, d, d, lin);
      const k = this.linear(p + 'wk', ln1, T, d, d, lin);
      const v = this.linear(p + 'wv', ln1, T, d, d, lin);
      if (positions) {
        applyRope(q, positions, d, nHead, ctx);
        applyRope(k, positions, d, nHead, ctx);
      }
      const attnOut = this.alloc(T * d);
      const probs = this.alloc(probsLen);
      parallelFor(attnForwardTask, nHead * seqLens.length, [q, k, v, attnMeta], [attnOut, probs], [d, hd, seqLens.length, invSqrt]);
      const o = this.linear(p + 'wo', attnOut, T, d, d, lin);
      const h1 = this.fresh(T * d);
      addScaled(h1, x, o, 1, h1.length);
      const ln2 = this.fresh(T * d);
      const ln2Mean = this.fresh(T);
      const ln2Rstd = this.fresh(T);
      layerNormRows(h1, this.w(p + 'ln2.g'), this.w(p + 'ln2.b'), ln2, ln2Mean, ln2Rstd, T, d);
      const up = this.linear(p + 'w1', ln2, T, d, ffn, lin);
      const act = this.fresh(T * ffn);
      parallelFor(geluTask, T * ffn, [up], [act], []);
      const down = this.linear(p + 'w2', act, T, ffn, d, lin);
      const out = this.fresh(T * d);
      addScaled(out, h1, down, 1, out.length);
      layers.push({ xIn: x, ln1, ln1Mean, ln1Rstd, q, k, v, probs, attnOut, lin, h: h1, ln2, ln2Mean, ln2Rstd, up, act });
      x = out;
    }
    const lnf = this.fresh(T * d);
    const lnfMean = this.fresh(T);
    const lnfRstd = this.fresh(T);
    layerNormRows(x, this.w('lnf.g'), this.w('lnf.b'), lnf, lnfMean, lnfRstd, T, d);
    const logits = this.fresh(T * V);
    matmulBT(lnf, tok, logits, T, V, d);
    let unembedXa: Arr | undefined;
    const ua = this.adapter('unembed');
    if (ua) {
      const r = this.loraSpec!.rank;
      unembedXa = this.fresh(T * r);
      matmul(lnf, ua.A, unembedXa, T, r, d);
      const t = this.fresh(T * V);
      matmul(unembedXa, ua.B, t, T, V, r);
      addScaled(logits, logits, t, this.scale, logits.length);
    }
    parallelFor(logSoftmaxTask, T, [], [logits], [V]);
    const { families: attnFamilies, count: nFamilies } = sequenceFamilies(parents);
    return { logprobs: logits, cache: { layers, xFinal: x, lnf, lnfMean, lnfRstd, unembedXa, tokens, seqStarts, seqLens, offsets, parentStarts, attnMeta, maxWidth, attnFamilies, nFamilies, ...(positions ? { positions } : {}) } };
  }

  /**
   * Backward from dL/dlogprob of chosen targets: contribution e is `dLogprob[e]` for the log-prob of
   * `targets[e]` at position `rows[e]` (by default e itself; a shared prefix's position receives one
   * contribution per sequence continuing it). Zero contributions add nothing. Gradients accumulate
   * into `grads`.
   */
  backward(fwd: ForwardResult, targets: Int32Array, dLogprob: Arr, grads: Params, rows?: Int32Array): void {
    const { d, nHead, ffn, vocabSize: V } = this.c;
    const { layers, lnf, lnfMean, lnfRstd, xFinal, unembedXa, tokens, seqStarts, seqLens, offsets } = fwd.cache;
    const T = tokens.length;
    const lp = fwd.logprobs;
    if (targets.length !== dLogprob.length || (rows ? rows.length !== targets.length : targets.length !== T)) throw new Error('backward: targets, gradients and rows disagree in length');
    // dlogits = Σ g · (onehot(target) − softmax) over a position's contributions
    const dlogits = this.alloc(T * V);
    const rowOf = rows ?? Int32Array.from(targets, (_, e) => e);
    parallelFor(dlogitsTask, T, [lp, targets, dLogprob, rowOf], [dlogits], [V, targets.length]);
    const tok = this.w('tok');
    const dlnf = this.fresh(T * d);
    matmul(dlogits, tok, dlnf, T, d, V);
    const gTok = grads.get('tok');
    if (gTok) matmulAT(dlogits, lnf, gTok, V, d, T, true);
    const ua = this.adapter('unembed');
    if (ua && unembedXa) {
      const r = this.loraSpec!.rank;
      const gB = grads.get('unembed.B');
      if (gB) {
        const tmp = this.fresh(r * V);
        matmulAT(unembedXa, dlogits, tmp, r, V, T);
        for (let i = 0; i < tmp.length; i++) gB[i] += this.scale * tmp[i]!;
      }
      const dxa = this.fresh(T * r);
      matmulBT(dlogits, ua.B, dxa, T, r, V);
      scaleInPlace(dxa, this.scale, dxa.length);
      const gA = grads.get('unembed.A');
      if (gA) matmulAT(lnf, dxa, gA, d, r, T, true);
      const t2 = this.fresh(T * d);
      matmulBT(dxa, ua.A, t2, T, d, r);
      addScaled(dlnf, dlnf, t2, 1, dlnf.length);
    }
    let dx = this.alloc(T * d);
    layerNormBackwardRows(dlnf, xFinal, this.w('lnf.g'), lnfMean, lnfRstd, dx, grads.get('lnf.g'), grads.get('lnf.b'), T, d);
    const hd = d / nHead;
    const invSqrt = 1 / Math.sqrt(hd);
    for (let l = this.c.nLayer - 1; l >= 0; l--) {
      const p = `h${l}.`;
      const c = layers[l]!;
      // this layer's temporaries go back when dxIn, the next layer's input gradient, is done
      const dxIn = this.fresh(T * d);
      const mark = this.scratch?.mark();
      // MLP
      const dAct = this.linearBackward(p + 'w2', dx, T, ffn, d, c.lin, grads);
      const dUp = this.fresh(T * ffn);
      parallelFor(geluBackwardTask, T * ffn, [c.up, dAct], [dUp], []);
      const dLn2 = this.linearBackward(p + 'w1', dUp, T, d, ffn, c.lin, grads);
      const dh = this.fresh(T * d);
      dh.set(dx);
      layerNormBackwardRows(dLn2, c.h, this.w(p + 'ln2.g'), c.ln2Mean, c.ln2Rstd, dh, grads.get(p + 'ln2.g'), grads.get(p + 'ln2.b'), T, d);
      // attention
      const dAttnOut = this.linearBackward(p + 'wo', dh, T, d, d, c.lin, grads);
      const dq = this.alloc(T * d);
      const dk = this.alloc(T * d);
      const dv = this.alloc(T * d);
      // scratch for the GEMM path of sequences attending to more than 64 positions
      const dScores = this.fresh(fwd.cache.maxWidth > 64 ? c.probs.length : 1);
      const { attnFamilies: fam, nFamilies: nFam } = fwd.cache;
      parallelFor(attnBackwardTask, nHead * nFam, [dAttnOut, c.q, c.k, c.v, c.probs, fwd.cache.attnMeta, fam], [dq, dk, dv, dScores], [d, hd, seqLens.length, invSqrt, fwd.cache.maxWidth, nFam]);
      // RoPE: the gradients of the rotated queries and keys, rotated back
      if (fwd.cache.positions) {
        applyRope(dq, fwd.cache.positions, d, nHead, this.c.ctx, true);
        applyRope(dk, fwd.cache.positions, d, nHead, this.c.ctx, true);
      }
      const dLn1 = this.linearBackward(p + 'wq', dq, T, d, d, c.lin, grads);
      const dLn1k = this.linearBackward(p + 'wk', dk, T, d, d, c.lin, grads);
      const dLn1v = this.linearBackward(p + 'wv', dv, T, d, d, c.lin, grads);
      parallelFor(elementwiseTask, dLn1.length, [dLn1k, dLn1v], [dLn1], [1, 0]);
      dxIn.set(dh);
      layerNormBackwardRows(dLn1, c.xIn, this.w(p + 'ln1.g'), c.ln1Mean, c.ln1Rstd, dxIn, grads.get(p + 'ln1.g'), grads.get(p + 'ln1.b'), T, d);
      if (mark !== undefined) this.scratch!.releaseTo(mark);
      dx = dxIn;
    }
    const gPos = grads.get('pos');
    seqStarts.forEach((s, si) => {
      const off = offsets[si]!;
      for (let i = 0; i < seqLens[si]!; i++) {
        const t = s + i;
        if (gTok) {
          const to = tokens[t]! * d;
          for (let j = 0; j < d; j++) gTok[to + j] += dx[t * d + j]!;
        }
        const po = (off + i) * d;
        if (gPos) for (let j = 0; j < d; j++) gPos[po + j] += dx[t * d + j]!;
      }
    });
  }
}
