// Generates the WASM SIMD GEMM module: a GotoBLAS-style blocked driver (panels of op(B) and
// blocks of op(A) packed into contiguous strips, so the three layouts share one micro-kernel and
// no operand is ever transposed whole) around an MR×NR register-blocked f32x4 micro-kernel.
// Plain WASM SIMD (mul + add, no relaxed-SIMD FMA), so it runs on every Node 20+.
import { encodeModule, F32, FnBuilder, I32, Local, V128 } from './wasmEmit';

export interface KernelShape {
  /** rows of the micro-tile */
  mr: number;
  /** columns of the micro-tile (multiple of 4) */
  nr: number;
  /** rows of a packed block of op(A) (multiple of mr) */
  mc: number;
  /** depth of a packed block */
  kc: number;
  /** columns of a packed panel of op(B) (multiple of nr) */
  nc: number;
  /** products with fewer rows than this read a non-transposed B in place instead of packing it */
  directBMaxRows: number;
}

export const DEFAULT_SHAPE: KernelShape = { mr: 4, nr: 8, mc: 128, kc: 256, nc: 512, directBMaxRows: 32 };

/** Bytes of scratch one thread's gemm call needs (packed A, packed B, one edge tile). */
export function workspaceBytes(s: KernelShape): number {
  return (s.mc * s.kc + s.kc * s.nc + s.mr * s.nr) * 4;
}

const FN_PACK = 0;
const FN_MICRO = 1;

/**
 * Exports `gemm(a, b, c, m, n, k, sai, sap, sbp, sbj, ldc, alpha, accumulate, ws)`: addresses in
 * bytes, strides in elements: op(A)[i][p] = a[i*sai + p*sap], op(B)[p][j] = b[p*sbp + j*sbj],
 * C[i][j] = c[i*ldc + j]. Requires k ≥ 1; `ws` points at workspaceBytes(shape) free bytes.
 * Also exports `dotBT(a, b, c, m, n, k, lda, ldb, ldc, alpha, accumulate)`: C = alpha·A·Bᵀ (+ C)
 * for A m×k and B n×k both row-major (row pitches in elements), as dot products along k — for a few rows, where packing Bᵀ costs more
 * than the product.
 */
export function buildGemmModule(pages: number, shared: boolean, s: KernelShape = DEFAULT_SHAPE): Uint8Array {
  return encodeModule({ pages, shared }, [buildPack(), buildMicro(s), buildDriver(s), buildDotBT()]);
}

function min(f: FnBuilder, x: () => void, y: () => void): void {
  x();
  y();
  x();
  y();
  f.ltS().select();
}

/** pack(src, sRow, sCol, rows, cols, w, dst): strips of w columns, each rows×w contiguous, zero-padded. */
function buildPack(): FnBuilder {
  const f = new FnBuilder(undefined, [I32, I32, I32, I32, I32, I32, I32], []);
  const [src, sRow, sCol, rows, cols, w, dst] = [0, 1, 2, 3, 4, 5, 6];
  const sIdx = f.local(I32);
  const p = f.local(I32);
  const jj = f.local(I32);
  const j = f.local(I32);
  const rowp = f.local(I32);
  const one = (): void => void f.i32(1);
  f.forRange(sIdx, () => f.i32(0), () => f.get(cols), () => f.get(w), () => {
    // full strip of contiguous columns: copy with v128 (w is a multiple of 4 here)
    f.get(sIdx).get(w).add().get(cols).ltS().get(sIdx).get(w).add().get(cols).eq().or()
      .get(sCol).i32(4).eq().and();
    f.ifElse(
      () => {
        f.forRange(p, () => f.i32(0), () => f.get(rows), one, () => {
          f.get(src).get(p).get(sRow).mul().add().get(sIdx).i32(4).mul().add().set(rowp);
          f.forRange(jj, () => f.i32(0), () => f.get(w), () => f.i32(4), () => {
            f.get(dst).get(rowp).get(jj).i32(4).mul().add().v128Load().v128Store();
            f.get(dst).i32(16).add().set(dst);
          });
        });
      },
      () => {
        f.forRange(p, () => f.i32(0), () => f.get(rows), one, () => {
          f.get(src).get(p).get(sRow).mul().add().set(rowp);
          f.forRange(jj, () => f.i32(0), () => f.get(w), one, () => {
            f.get(sIdx).get(jj).add().tee(j).get(cols).ltS();
            f.ifElse(
              () => void f.get(dst).get(rowp).get(j).get(sCol).mul().add().f32Load().f32Store(),
              () => void f.get(dst).f32(0).f32Store(),
            );
            f.get(dst).i32(4).add().set(dst);
          });
        });
      },
    );
  });
  return f;
}

/**
 * micro(ap, bp, kc, c, ldcBytes, mr, nr, alpha, load, tmp, bstep): one MR×NR tile of C; op(B)'s
 * rows are `bstep` bytes apart (NR·4 when packed, B's row pitch when read in place).
 */
function buildMicro(s: KernelShape): FnBuilder {
  const f = new FnBuilder(undefined, [I32, I32, I32, I32, I32, I32, I32, F32, I32, I32, I32], []);
  const [ap, bp, kc, c, ldc, mr, nr, alpha, load, tmp, bstep] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const nv = s.nr / 4;
  const acc: Local[] = [];
  for (let i = 0; i < s.mr * nv; i++) acc.push(f.local(V128));
  const bv: Local[] = [];
  for (let v = 0; v < nv; v++) bv.push(f.local(V128));
  const av = f.local(V128);
  const alphav = f.local(V128);
  const p = f.local(I32);
  const row = f.local(I32);
  const ii = f.local(I32);
  const jj = f.local(I32);
  const addr = f.local(I32);
  const val = f.local(F32);
  for (const a of acc) f.v128Zero().set(a);
  f.get(kc).set(p);
  f.loop(() => {
    for (let v = 0; v < nv; v++) f.get(bp).v128Load(16 * v).set(bv[v]!);
    for (let i = 0; i < s.mr; i++) {
      f.get(ap).load32Splat(4 * i).set(av);
      for (let v = 0; v < nv; v++) {
        const a = acc[i * nv + v]!;
        f.get(a).get(av).get(bv[v]!).f32x4Mul().f32x4Add().set(a);
      }
    }
    f.get(ap).i32(4 * s.mr).add().set(ap);
    f.get(bp).get(bstep).add().set(bp);
    f.get(p).i32(1).sub().tee(p).brIf(0);
  });
  f.get(alpha).f32x4Splat().set(alphav);
  for (const a of acc) f.get(a).get(alphav).f32x4Mul().set(a);
  f.get(mr).i32(s.mr).eq().get(nr).i32(s.nr).eq().and();
  f.ifElse(
    () => {
      const tile = (withLoad: boolean): void => {
        for (let i = 0; i < s.mr; i++) {
          f.get(c).get(ldc).i32(i).mul().add().set(row);
          for (let v = 0; v < nv; v++) {
            f.get(row);
            if (withLoad) f.get(row).v128Load(16 * v).get(acc[i * nv + v]!).f32x4Add();
            else f.get(acc[i * nv + v]!);
            f.v128Store(16 * v);
          }
        }
      };
      f.get(load).ifElse(() => tile(true), () => tile(false));
    },
    () => {
      // edge tile: spill to tmp, then add/store the valid part element by element
      for (let i = 0; i < s.mr; i++) for (let v = 0; v < nv; v++) f.get(tmp).get(acc[i * nv + v]!).v128Store((i * s.nr + v * 4) * 4);
      f.forRange(ii, () => f.i32(0), () => f.get(mr), () => f.i32(1), () => {
        f.forRange(jj, () => f.i32(0), () => f.get(nr), () => f.i32(1), () => {
          f.get(c).get(ii).get(ldc).mul().add().get(jj).i32(4).mul().add().set(addr);
          f.get(tmp).get(ii).i32(s.nr * 4).mul().add().get(jj).i32(4).mul().add().f32Load().set(val);
          f.get(load).ifElse(
            () => void f.get(addr).get(addr).f32Load().get(val).f32Add().f32Store(),
            () => void f.get(addr).get(val).f32Store(),
          );
        });
      });
    },
  );
  return f;
}

function buildDriver(s: KernelShape): FnBuilder {
  const f = new FnBuilder('gemm', [I32, I32, I32, I32, I32, I32, I32, I32, I32, I32, I32, F32, I32, I32], []);
  const [a, b, c, m, n, k, sai, sap, sbp, sbj, ldc, alpha, accumulate, ws] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13];
  const jc = f.local(I32);
  const pc = f.local(I32);
  const ic = f.local(I32);
  const js = f.local(I32);
  const is = f.local(I32);
  const nc = f.local(I32);
  const kc = f.local(I32);
  const mc = f.local(I32);
  const ld = f.local(I32);
  const apk = f.local(I32);
  const bpk = f.local(I32);
  const tmp = f.local(I32);
  const direct = f.local(I32);
  const tail = f.local(I32);
  for (const x of [sai, sap, sbp, sbj, ldc]) f.get(x).i32(4).mul().set(x);
  f.get(ws).i32(s.mc * s.kc * 4).add().set(bpk);
  f.get(bpk).i32(s.kc * s.nc * 4).add().set(tmp);
  f.get(ws).set(apk);
  // few rows of C: reading op(B) in place beats packing it (the pack would cost as much as the
  // product); needs op(B)'s rows contiguous, i.e. B not transposed
  f.get(sbj).i32(4).eq().get(m).i32(s.directBMaxRows).ltS().and().set(direct);
  f.forRange(jc, () => f.i32(0), () => f.get(n), () => f.i32(s.nc), () => {
    min(f, () => f.i32(s.nc), () => f.get(n).get(jc).sub());
    f.set(nc);
    f.forRange(pc, () => f.i32(0), () => f.get(k), () => f.i32(s.kc), () => {
      min(f, () => f.i32(s.kc), () => f.get(k).get(pc).sub());
      f.set(kc);
      f.get(direct).ifElse(
        () => {
          // only the last, partial strip is packed (full strips are read from B itself)
          f.get(nc).get(nc).i32(s.nr).rem().sub().set(tail);
          f.get(b).get(pc).get(sbp).mul().add().get(jc).get(tail).add().get(sbj).mul().add();
          f.get(sbp).get(sbj).get(kc).get(nc).get(tail).sub().i32(s.nr).get(bpk).get(tail).get(kc).mul().i32(4).mul().add().call(FN_PACK);
        },
        () => {
          f.i32(0).set(tail);
          f.get(b).get(pc).get(sbp).mul().add().get(jc).get(sbj).mul().add();
          f.get(sbp).get(sbj).get(kc).get(nc).i32(s.nr).get(bpk).call(FN_PACK);
        },
      );
      f.get(accumulate).get(pc).i32(0).gtS().or().set(ld);
      f.forRange(ic, () => f.i32(0), () => f.get(m), () => f.i32(s.mc), () => {
        min(f, () => f.i32(s.mc), () => f.get(m).get(ic).sub());
        f.set(mc);
        f.get(a).get(ic).get(sai).mul().add().get(pc).get(sap).mul().add();
        f.get(sap).get(sai).get(kc).get(mc).i32(s.mr).get(apk).call(FN_PACK);
        f.forRange(js, () => f.i32(0), () => f.get(nc), () => f.i32(s.nr), () => {
          f.forRange(is, () => f.i32(0), () => f.get(mc), () => f.i32(s.mr), () => {
            f.get(apk).get(is).get(kc).mul().i32(4).mul().add();
            // strips before `tail` are in place in B (direct mode), the others packed
            f.get(b).get(pc).get(sbp).mul().add().get(jc).get(js).add().get(sbj).mul().add();
            f.get(bpk).get(js).get(kc).mul().i32(4).mul().add();
            f.get(js).get(tail).ltS().select();
            f.get(kc);
            f.get(c).get(ic).get(is).add().get(ldc).mul().add().get(jc).get(js).add().i32(4).mul().add();
            f.get(ldc);
            min(f, () => f.i32(s.mr), () => f.get(mc).get(is).sub());
            min(f, () => f.i32(s.nr), () => f.get(nc).get(js).sub());
            f.get(alpha).get(ld).get(tmp);
            f.get(sbp).i32(s.nr * 4).get(js).get(tail).ltS().select();
            f.call(FN_MICRO);
          });
        });
      });
    });
  });
  return f;
}

/** dotBT(a, b, c, m, n, k, lda, ldb, ldc, alpha, accumulate): see buildGemmModule. */
function buildDotBT(): FnBuilder {
  const f = new FnBuilder('dotBT', [I32, I32, I32, I32, I32, I32, I32, I32, I32, F32, I32], []);
  const [a, b, c, m, n, k, lda, ldb, ldc, alpha, accumulate] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const i = f.local(I32);
  const j = f.local(I32);
  const p = f.local(I32);
  const arow = f.local(I32);
  const crow = f.local(I32);
  const k4 = f.local(I32);
  const av = f.local(V128);
  const bp: Local[] = [0, 1, 2, 3].map(() => f.local(I32));
  const acc: Local[] = [0, 1, 2, 3].map(() => f.local(V128));
  const sum: Local[] = [0, 1, 2, 3].map(() => f.local(F32));
  const x = f.local(F32);
  // k rounded down to a multiple of 4: the SIMD part of each dot product
  f.get(k).get(k).i32(4).rem().sub().set(k4);
  /** `cols` (4 or 1) columns of C starting at j, for row i */
  const columns = (cols: number): void => {
    for (let t = 0; t < cols; t++) {
      f.get(b).get(j).i32(t).add().get(ldb).mul().i32(4).mul().add().set(bp[t]!);
      f.v128Zero().set(acc[t]!);
    }
    f.forRange(p, () => f.i32(0), () => f.get(k4), () => f.i32(4), () => {
      f.get(arow).get(p).i32(4).mul().add().v128Load().set(av);
      for (let t = 0; t < cols; t++) {
        f.get(acc[t]!).get(av).get(bp[t]!).get(p).i32(4).mul().add().v128Load().f32x4Mul().f32x4Add().set(acc[t]!);
      }
    });
    for (let t = 0; t < cols; t++) {
      const v = acc[t]!;
      f.get(v).f32x4ExtractLane(0).get(v).f32x4ExtractLane(1).f32Add().get(v).f32x4ExtractLane(2).get(v).f32x4ExtractLane(3).f32Add().f32Add().set(sum[t]!);
    }
    f.forRange(p, () => f.get(k4), () => f.get(k), () => f.i32(1), () => {
      f.get(arow).get(p).i32(4).mul().add().f32Load().set(x);
      for (let t = 0; t < cols; t++) {
        f.get(sum[t]!).get(x).get(bp[t]!).get(p).i32(4).mul().add().f32Load().f32Mul().f32Add().set(sum[t]!);
      }
    });
    for (let t = 0; t < cols; t++) {
      f.get(sum[t]!).get(alpha).f32Mul().set(sum[t]!);
      f.get(accumulate).ifElse(() => {
        f.get(crow).get(j).i32(t).add().i32(4).mul().add().set(bp[t]!);
        f.get(bp[t]!).get(bp[t]!).f32Load().get(sum[t]!).f32Add().f32Store();
      }, () => {
        f.get(crow).get(j).i32(t).add().i32(4).mul().add().get(sum[t]!).f32Store();
      });
    }
  };
  f.forRange(i, () => f.i32(0), () => f.get(m), () => f.i32(1), () => {
    f.get(a).get(i).get(lda).mul().i32(4).mul().add().set(arow);
    f.get(c).get(i).get(ldc).mul().i32(4).mul().add().set(crow);
    f.i32(0).set(j);
    f.block(() => {
      f.loop(() => {
        f.get(j).i32(4).add().get(n).gtS().brIf(1);
        columns(4);
        f.get(j).i32(4).add().set(j).br(0);
      });
    });
    f.block(() => {
      f.loop(() => {
        f.get(j).get(n).geS().brIf(1);
        columns(1);
        f.get(j).i32(1).add().set(j).br(0);
      });
    });
  });
  return f;
}
