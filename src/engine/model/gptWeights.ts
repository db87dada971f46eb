// The engine GPT's weights: its shape (GptConfig), the LoRA adapters' spec, every weight's name and
// shape in file order, seeded initialisation, and the adapters folded into the base for sampling.
import { Arr, matmul } from './ops';

export interface GptConfig {
  vocabSize: number;
  /** longest sequence (positions) */
  ctx: number;
  d: number;
  nLayer: number;
  nHead: number;
  ffn: number;
  /**
   * Rotary positions (RoPE: Su et al., "RoFormer", 2021) instead of learned position embeddings: no
   * `pos` weights; each head's queries and keys are rotated, pair (2i, 2i+1) by the angle
   * position·10000^(−2i/head size), so an attention score depends on how far apart two tokens are,
   * not on where they sit, and what the model learns at one position holds at every other
   * (arith-chat). Absent or false: learned positions (arith-gpt).
   */
  rope?: boolean;
}

export interface LoraSpec {
  rank: number;
  alpha: number;
  attn: boolean;
  mlp: boolean;
  unembed: boolean;
}

/** Linear layers that can carry an adapter, per block. */
export const ATTN_LINEARS = ['wq', 'wk', 'wv', 'wo'] as const;
export const MLP_LINEARS = ['w1', 'w2'] as const;

export type Params = Map<string, Arr>;

/** Shapes of the base weights, in a fixed order (the order of the weights file). */
export function baseShapes(c: GptConfig): Array<[string, number[]]> {
  const s: Array<[string, number[]]> = [
    ['tok', [c.vocabSize, c.d]],
    ...(c.rope ? [] : ([['pos', [c.ctx, c.d]]] as Array<[string, number[]]>)),
  ];
  for (let l = 0; l < c.nLayer; l++) {
    s.push([`h${l}.ln1.g`, [c.d]], [`h${l}.ln1.b`, [c.d]]);
    for (const w of ATTN_LINEARS) s.push([`h${l}.${w}`, [c.d, c.d]]);
    s.push([`h${l}.ln2.g`, [c.d]], [`h${l}.ln2.b`, [c.d]]);
    s.push([`h${l}.w1`, [c.d, c.ffn]], [`h${l}.w2`, [c.ffn, c.d]]);
  }
  s.push(['lnf.g', [c.d]], ['lnf.b', [c.d]]);
  return s;
}

/** Shapes of the LoRA adapters: for a linear in×out, A is in×r and B is r×out. */
export function loraShapes(c: GptConfig, lora: LoraSpec): Array<[string, number[]]> {
  const r = lora.rank;
  const s: Array<[string, number[]]> = [];
  for (let l = 0; l < c.nLayer; l++) {
    if (lora.attn) for (const w of ATTN_LINEARS) s.push([`h${l}.${w}.A`, [c.d, r]], [`h${l}.${w}.B`, [r, c.d]]);
    if (lora.mlp) {
      s.push([`h${l}.w1.A`, [c.d, r]], [`h${l}.w1.B`, [r, c.ffn]]);
      s.push([`h${l}.w2.A`, [c.ffn, r]], [`h${l}.w2.B`, [r, c.d]]);
    }
  }
  if (lora.unembed) s.push(['unembed.A', [c.d, r]], ['unembed.B', [r, c.vocabSize]]);
  return s;
}

export function numel(shape: number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** A deterministic PRNG (mulberry32) with a normal sampler; same seed, same numbers everywhere. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  normal(): number {
    const u = Math.max(this.next(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
}

export function initBase(c: GptConfig, seed: number, alloc: (n: number) => Arr): Params {
  const rng = new Rng(seed);
  const p: Params = new Map();
  for (const [name, shape] of baseShapes(c)) {
    const a = alloc(numel(shape));
    if (name.endsWith('.g')) a.fill(1);
    else if (name.endsWith('.b')) a.fill(0);
    else {
      // GPT-2 style: N(0, 0.02), output projections scaled down by depth
      const std = name.endsWith('.wo') || name.endsWith('.w2') ? 0.02 / Math.sqrt(2 * c.nLayer) : 0.02;
      for (let i = 0; i < a.length; i++) a[i] = rng.normal() * std;
    }
    p.set(name, a);
  }
  return p;
}

export function initLora(c: GptConfig, lora: LoraSpec, seed: number, alloc: (n: number) => Arr): Params {
  const rng = new Rng(seed);
  const p: Params = new Map();
  for (const [name, shape] of loraShapes(c, lora)) {
    const a = alloc(numel(shape));
    if (name.endsWith('.A')) {
      // Kaiming-uniform-like init of A; B starts at zero so the adapter starts as a no-op
      const bound = 1 / Math.sqrt(shape[0]!);
      for (let i = 0; i < a.length; i++) a[i] = (rng.next() * 2 - 1) * bound;
    }
    p.set(name, a);
  }
  return p;
}

/** Base weights with the LoRA adapters folded in (W + scale·A·B), for fast sampling. */
export function mergeLora(c: GptConfig, base: Params, lora: Params | undefined, spec: LoraSpec | undefined): Params {
  const merged: Params = new Map();
  for (const [k, v] of base) merged.set(k, Float32Array.from(v));
  if (!lora || !spec) return merged;
  const scale = spec.alpha / spec.rank;
  const r = spec.rank;
  const fold = (name: string, din: number, dout: number) => {
    const A = lora.get(`${name}.A`);
    const B = lora.get(`${name}.B`);
    if (!A || !B) return;
    const ab = new Float32Array(din * dout);
    matmul(A, B, ab, din, dout, r);
    const w = merged.get(name)!;
    for (let i = 0; i < w.length; i++) w[i] += scale * ab[i]!;
  };
  for (let l = 0; l < c.nLayer; l++) {
    for (const w of ATTN_LINEARS) fold(`h${l}.${w}`, c.d, c.d);
    fold(`h${l}.w1`, c.d, c.ffn);
    fold(`h${l}.w2`, c.ffn, c.d);
  }
  // The unembedding is tied to `tok`; its adapter is kept separate so the embedding stays untouched.
  const A = lora.get('unembed.A');
  const B = lora.get('unembed.B');
  if (A && B) {
    const ab = new Float32Array(c.d * c.vocabSize);
    matmul(A, B, ab, c.d, c.vocabSize, r);
    const un = new Float32Array(c.vocabSize * c.d);
    const tok = merged.get('tok')!;
    // unembedding matrix (V×d) = tok + scale·(A·B)ᵀ
    for (let vI = 0; vI < c.vocabSize; vI++) for (let j = 0; j < c.d; j++) un[vI * c.d + j] = tok[vI * c.d + j]! + scale * ab[j * c.vocabSize + vI]!;
    merged.set('unembed', un);
  }
  return merged;
}
