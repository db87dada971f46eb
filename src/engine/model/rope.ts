// Rotary positions (RoPE) for the engine's GPT: each head's queries and keys rotated pair by pair by
// an angle that grows with the position, forward and (inverse) backward.
import type { Arr } from './ops';

/** RoPE's frequency base (as GPT-NeoX, LLaMA). */
export const ROPE_BASE = 10_000;

const ropeTables = new Map<string, { cos: Float64Array; sin: Float64Array }>();

/** cos and sin of position·θ_i for every position < ctx and pair i < hd/2 (computed once per shape). */
function ropeTable(ctx: number, hd: number): { cos: Float64Array; sin: Float64Array } {
  const key = `${ctx}:${hd}`;
  let t = ropeTables.get(key);
  if (!t) {
    const half = hd / 2;
    const cos = new Float64Array(ctx * half);
    const sin = new Float64Array(ctx * half);
    for (let i = 0; i < half; i++) {
      const theta = Math.pow(ROPE_BASE, (-2 * i) / hd);
      for (let m = 0; m < ctx; m++) {
        cos[m * half + i] = Math.cos(m * theta);
        sin[m * half + i] = Math.sin(m * theta);
      }
    }
    t = { cos, sin };
    ropeTables.set(key, t);
  }
  return t;
}

/**
 * Rotates rows of x (T×d, nHead heads of hd) in place: row t by the angles of position `positions[t]`
 * (`inverse`: by the opposite angles, which is the rotation's transpose — the backward pass of the
 * forward rotation). Every element is computed from its own pair only, so results do not depend on
 * thread counts or batch-mates.
 */
export function applyRope(x: Arr, positions: Int32Array, d: number, nHead: number, ctx: number, inverse = false): void {
  const hd = d / nHead;
  const half = hd / 2;
  const { cos, sin } = ropeTable(ctx, hd);
  const sign = inverse ? -1 : 1;
  for (let t = 0; t < positions.length; t++) {
    const m = positions[t]!;
    if (!(m >= 0 && m < ctx)) throw new Error(`position ${m} is outside the context of ${ctx}`);
    for (let h = 0; h < nHead; h++) {
      const o = t * d + h * hd;
      for (let i = 0; i < half; i++) {
        const c = cos[m * half + i]!;
        const s = sign * sin[m * half + i]!;
        const a = x[o + 2 * i]!;
        const b = x[o + 2 * i + 1]!;
        x[o + 2 * i] = a * c - b * s;
        x[o + 2 * i + 1] = a * s + b * c;
      }
    }
  }
}
