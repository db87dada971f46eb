// TensorData in one and two dimensions, as the Python SDK builds and reads them: a 2-D tensor goes
// dense (row-major values and its shape), or as CSR when that is smaller — (nrows + 1) row pointers
// + nnz column indices + nnz values < nrows·ncols values, the SDK's from_torch_sparse rule — and a
// receiver turns either back into dense row-major values (denseTensor), as the SDK's to_torch does.
import type { DType, NumArray, TensorData } from './types';

export interface DenseTensor {
  dtype: DType;
  /** row-major values */
  data: Float32Array | Float64Array;
  shape: number[];
}

/** A 1-D tensor of `data`. */
export function tensor1d(data: NumArray, dtype: DType): TensorData {
  return { data, dtype, shape: [data.length] };
}

/**
 * A 2-D tensor from its rows (all of one length) or from row-major values and [nrows, ncols]: dense,
 * or CSR when that is smaller (`sparse: 'auto'`, the default, like the SDK), or as asked.
 */
export function tensor2d(
  values: ReadonlyArray<ArrayLike<number>> | { data: ArrayLike<number>; shape: [number, number] },
  dtype: DType,
  opts: { sparse?: 'auto' | 'always' | 'never' } = {},
): TensorData {
  let nrows: number;
  let ncols: number;
  let flat: Float64Array;
  if ('shape' in values && !Array.isArray(values)) {
    [nrows, ncols] = values.shape;
    if (!(Number.isInteger(nrows) && Number.isInteger(ncols) && nrows >= 0 && ncols >= 0)) throw new Error(`tensor2d: shape [${nrows}, ${ncols}] is not two non-negative integers`);
    if (values.data.length !== nrows * ncols) throw new Error(`tensor2d: ${values.data.length} values do not fill the shape [${nrows}, ${ncols}]`);
    flat = Float64Array.from(values.data);
  } else {
    const rows = values as ReadonlyArray<ArrayLike<number>>;
    nrows = rows.length;
    ncols = nrows ? rows[0]!.length : 0;
    flat = new Float64Array(nrows * ncols);
    rows.forEach((r, i) => {
      if (r.length !== ncols) throw new Error(`tensor2d: row ${i} has ${r.length} values, row 0 has ${ncols}`);
      for (let j = 0; j < ncols; j++) flat[i * ncols + j] = r[j]!;
    });
  }
  let nnz = 0;
  for (const v of flat) if (v !== 0) nnz++;
  const mode = opts.sparse ?? 'auto';
  const sparse = mode === 'always' || (mode === 'auto' && nrows + 1 + 2 * nnz < nrows * ncols);
  const typed = (xs: ArrayLike<number>) => (dtype === 'float32' ? Float32Array.from(xs) : Float64Array.from(xs));
  if (!sparse) return { data: typed(flat), dtype, shape: [nrows, ncols] };
  const crow = new Array<number>(nrows + 1);
  const col: number[] = [];
  const vals: number[] = [];
  crow[0] = 0;
  for (let i = 0; i < nrows; i++) {
    for (let j = 0; j < ncols; j++) {
      const v = flat[i * ncols + j]!;
      if (v !== 0) {
        col.push(j);
        vals.push(v);
      }
    }
    crow[i + 1] = vals.length;
  }
  return { data: typed(vals), dtype, shape: [nrows, ncols], sparse_crow_indices: crow, sparse_col_indices: col };
}

/**
 * The dense row-major values of a tensor (dense, or CSR with its shape), checked: the values fill
 * the shape, CSR row pointers start at 0, never decrease and end at the number of values, column
 * indices lie within the row length. Repeated (row, column) pairs add up (as torch's to_dense).
 * Errors name `what` (e.g. "datum 3: loss_fn_inputs.weights").
 */
export function denseTensor(t: TensorData, what: string): DenseTensor {
  const make = (n: number) => (t.dtype === 'float32' ? new Float32Array(n) : new Float64Array(n));
  const shape = t.shape ?? undefined;
  if (shape && !shape.every((s) => Number.isInteger(s) && s >= 0)) throw new Error(`${what}: shape [${shape.join(', ')}] is not a list of non-negative integers`);
  if (t.sparse_crow_indices == null) {
    if (t.sparse_col_indices != null) throw new Error(`${what}: sparse_col_indices without sparse_crow_indices`);
    const s = shape ?? [t.data.length];
    const n = s.reduce((a, b) => a * b, 1);
    if (n !== t.data.length) throw new Error(`${what}: ${t.data.length} values do not fill the shape [${s.join(', ')}]`);
    const data = make(n);
    data.set(t.data);
    return { dtype: t.dtype, data, shape: s };
  }
  const crow = t.sparse_crow_indices;
  const col = t.sparse_col_indices;
  if (!col) throw new Error(`${what}: a sparse (CSR) tensor needs sparse_col_indices with its sparse_crow_indices`);
  if (!shape || shape.length !== 2) throw new Error(`${what}: a sparse (CSR) tensor needs a 2-D shape, got ${shape ? `[${shape.join(', ')}]` : 'none'}`);
  const [nrows, ncols] = shape as [number, number];
  const nnz = t.data.length;
  if (crow.length !== nrows + 1) throw new Error(`${what}: sparse_crow_indices has ${crow.length} entries; a CSR tensor of ${nrows} rows needs ${nrows + 1}`);
  if (col.length !== nnz) throw new Error(`${what}: sparse_col_indices has ${col.length} entries but there are ${nnz} values`);
  if (crow[0] !== 0 || crow[nrows] !== nnz) throw new Error(`${what}: sparse_crow_indices must start at 0 and end at the number of values (${nnz}), got ${crow[0]} … ${crow[nrows]}`);
  const data = make(nrows * ncols);
  const acc = new Float64Array(nrows * ncols);
  for (let i = 0; i < nrows; i++) {
    const a = crow[i]!;
    const b = crow[i + 1]!;
    if (!(Number.isInteger(a) && Number.isInteger(b) && b >= a)) throw new Error(`${what}: sparse_crow_indices decrease at row ${i} (${a} then ${b})`);
    for (let e = a; e < b; e++) {
      const j = col[e]!;
      if (!(Number.isInteger(j) && j >= 0 && j < ncols)) throw new Error(`${what}: sparse column index ${j} (value ${e}) is outside 0..${ncols - 1}`);
      acc[i * ncols + j] += t.data[e]!;
    }
  }
  data.set(acc);
  return { dtype: t.dtype, data, shape: [nrows, ncols] };
}
