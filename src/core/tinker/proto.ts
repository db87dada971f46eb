// Protobuf encoding of the Tinker messages (tinker_public.proto, protocol §4.6), in both directions:
// the client encodes ForwardBackwardRequest and decodes ForwardBackwardOutput / SampleResponse; the
// embedded engine does the reverse. Multi-byte tensor payloads are little-endian.
import { ProtoDecodeError, ProtoReader, ProtoWriter, WIRE_LEN } from './protobuf';
import {
  DType,
  Datum,
  ForwardBackwardOutput,
  ForwardBackwardRequestData,
  LOSS_FNS,
  LossFnType,
  ModelInputChunk,
  NumArray,
  SampleResponse,
  SampledSequence,
  TensorData,
} from './types';

export const PROTO_DTYPE = { UNSPECIFIED: 0, FLOAT32: 1, INT64: 2, INT32: 3, BFLOAT16: 4 } as const;
const TOPK_EMPTY_LOGPROB = -99999.0;

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// ---------- tensor payloads ----------

function float32Bytes(values: NumArray): Uint8Array {
  if (values instanceof Float32Array && LITTLE_ENDIAN) return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = values[i]!;
  return new Uint8Array(out.buffer);
}

function int32Bytes(values: NumArray): Uint8Array {
  if (values instanceof Int32Array && LITTLE_ENDIAN) return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  const out = new Int32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = values[i]!;
  return new Uint8Array(out.buffer);
}

function int64Bytes(values: NumArray): Uint8Array {
  if (!LITTLE_ENDIAN) {
    const big = new BigInt64Array(values.length);
    for (let i = 0; i < values.length; i++) big[i] = BigInt(checkedInt(values[i]!, i));
    return new Uint8Array(big.buffer);
  }
  // two little-endian 32-bit words per value: exact for safe integers, and no BigInt per token
  const out = new Uint32Array(values.length * 2);
  for (let i = 0; i < values.length; i++) {
    const v = checkedInt(values[i]!, i);
    if (Number.isSafeInteger(v)) {
      const hi = Math.floor(v / 4294967296);
      out[2 * i] = v - hi * 4294967296;
      out[2 * i + 1] = hi >>> 0;
    } else new DataView(out.buffer).setBigInt64(8 * i, BigInt(v), true);
  }
  return new Uint8Array(out.buffer);
}

function checkedInt(v: number, i: number): number {
  if (!Number.isInteger(v)) throw new Error(`int64 tensor holds a non-integer value ${v} at index ${i}`);
  return v;
}

/** A copy of `bytes` aligned for typed-array views (payloads inside a message may be unaligned). */
function aligned(bytes: Uint8Array, unit: number): ArrayBuffer {
  if (bytes.length % unit !== 0) throw new ProtoDecodeError(`a tensor payload of ${bytes.length} bytes is not a multiple of ${unit}`);
  // new Uint8Array(view) copies exactly the view (Buffer#slice would not: it aliases the pool)
  return new Uint8Array(bytes).buffer;
}

export function decodeFloat32(bytes: Uint8Array): Float32Array {
  return new Float32Array(aligned(bytes, 4));
}

export function decodeInt32(bytes: Uint8Array): Int32Array {
  return new Int32Array(aligned(bytes, 4));
}

export function decodeInt64(bytes: Uint8Array): number[] {
  const big = new BigInt64Array(aligned(bytes, 8));
  const out = new Array<number>(big.length);
  for (let i = 0; i < big.length; i++) out[i] = Number(big[i]);
  return out;
}

function decodeBfloat16(bytes: Uint8Array): Float32Array {
  const u16 = new Uint16Array(aligned(bytes, 2));
  const u32 = new Uint32Array(u16.length);
  for (let i = 0; i < u16.length; i++) u32[i] = u16[i]! << 16;
  return new Float32Array(u32.buffer);
}

function dtypeToProto(dtype: DType): number {
  return dtype === 'float32' ? PROTO_DTYPE.FLOAT32 : PROTO_DTYPE.INT64;
}

function valuesBytes(values: NumArray, dtype: DType): Uint8Array {
  return dtype === 'float32' ? float32Bytes(values) : int64Bytes(values);
}

// ---------- ForwardBackwardRequest ----------

function writeTensor(w: ProtoWriter, t: TensorData): void {
  if (t.sparse_crow_indices) {
    if (!t.sparse_col_indices) throw new Error('a sparse tensor needs sparse_col_indices');
    w.messageField(2, (s) => {
      s.bytesField(1, valuesBytes(t.data, t.dtype));
      s.bytesField(2, int64Bytes(t.sparse_crow_indices!));
      s.bytesField(3, int64Bytes(t.sparse_col_indices!));
    });
  } else {
    w.bytesField(1, valuesBytes(t.data, t.dtype));
  }
  w.varintField(3, dtypeToProto(t.dtype));
  if (t.shape) w.packedVarints(4, t.shape);
}

function base64Bytes(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s, 'base64'));
}

function writeChunk(w: ProtoWriter, c: ModelInputChunk): void {
  switch (c.type) {
    case 'encoded_text':
      w.messageField(1, (s) => s.bytesField(1, int32Bytes(c.tokens)));
      return;
    case 'image':
      w.messageField(2, (s) => {
        s.bytesField(1, base64Bytes(c.data));
        s.stringField(2, c.format);
        if (c.expected_tokens != null) s.varintField(3, c.expected_tokens);
      });
      return;
    case 'dmel':
      w.messageField(3, (s) => s.bytesField(1, base64Bytes(c.dmel)));
      return;
    case 'image_asset_pointer':
      throw new Error('image_asset_pointer chunks cannot be sent in a protobuf forward_backward request; send the image bytes');
  }
}

function writeDatum(w: ProtoWriter, d: Datum): void {
  for (const c of d.model_input.chunks) w.messageField(1, (cw) => writeChunk(cw, c));
  for (const [name, t] of Object.entries(d.loss_fn_inputs)) {
    w.messageField(2, (e) => {
      e.stringField(1, name);
      e.messageField(2, (tw) => writeTensor(tw, t));
    });
  }
}

export function encodeForwardBackwardRequest(req: ForwardBackwardRequestData): Uint8Array {
  const w = new ProtoWriter(1024);
  const scratch = new ProtoWriter(1024);
  w.stringField(1, req.model_id);
  if (req.seq_id) w.varintField(2, req.seq_id);
  for (const d of req.data) w.messageField(3, (dw) => writeDatum(dw, d), scratch);
  w.stringField(4, req.loss_fn);
  for (const [k, v] of Object.entries(req.loss_fn_config ?? {})) {
    w.messageField(5, (e) => {
      e.stringField(1, k);
      e.doubleField(2, v);
    });
  }
  if (req.forward_only) w.varintField(6, 1);
  return w.finish();
}

function readTensor(r: ProtoReader): TensorData {
  let dense: Uint8Array | undefined;
  let sparse: { values?: Uint8Array; crow?: Uint8Array; col?: Uint8Array } | undefined;
  let dtypeCode = 0;
  const shape: number[] = [];
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === WIRE_LEN) dense = r.bytes();
    else if (field === 2 && wire === WIRE_LEN) {
      const s = r.sub();
      sparse = {};
      while (!s.done()) {
        const t = s.tag();
        if (t.field === 1 && t.wire === WIRE_LEN) sparse.values = s.bytes();
        else if (t.field === 2 && t.wire === WIRE_LEN) sparse.crow = s.bytes();
        else if (t.field === 3 && t.wire === WIRE_LEN) sparse.col = s.bytes();
        else s.skip(t.wire);
      }
    } else if (field === 3) dtypeCode = r.varint();
    else if (field === 4) r.repeatedVarints(wire, shape);
    else r.skip(wire);
  }
  const dtype: DType | undefined = dtypeCode === PROTO_DTYPE.FLOAT32 ? 'float32' : dtypeCode === PROTO_DTYPE.INT64 ? 'int64' : undefined;
  if (!dtype) throw new ProtoDecodeError(`tensor dtype ${dtypeCode} is not FLOAT32 or INT64`);
  const decodeValues = (b: Uint8Array | undefined) =>
    !b ? [] : dtype === 'float32' ? decodeFloat32(b) : decodeInt64(b);
  const t: TensorData = { dtype, data: decodeValues(sparse ? sparse.values : dense) };
  if (shape.length) t.shape = shape;
  if (sparse) {
    t.sparse_crow_indices = sparse.crow ? decodeInt64(sparse.crow) : [];
    t.sparse_col_indices = sparse.col ? decodeInt64(sparse.col) : [];
  }
  return t;
}

function readChunk(r: ProtoReader): ModelInputChunk {
  const { field, wire } = r.tag();
  if (wire !== WIRE_LEN) throw new ProtoDecodeError(`Chunk field ${field} has wire type ${wire}`);
  const s = r.sub();
  if (field === 1) {
    let tokens: Int32Array = new Int32Array(0);
    while (!s.done()) {
      const t = s.tag();
      if (t.field === 1 && t.wire === WIRE_LEN) tokens = decodeInt32(s.bytes());
      else s.skip(t.wire);
    }
    return { type: 'encoded_text', tokens };
  }
  if (field === 2) {
    let data: Uint8Array = new Uint8Array(0);
    let format = 'png';
    let expected: number | undefined;
    while (!s.done()) {
      const t = s.tag();
      if (t.field === 1 && t.wire === WIRE_LEN) data = s.bytes();
      else if (t.field === 2 && t.wire === WIRE_LEN) format = s.string();
      else if (t.field === 3) expected = s.int32();
      else s.skip(t.wire);
    }
    if (format !== 'png' && format !== 'jpeg') throw new ProtoDecodeError(`image format "${format}" is not png or jpeg`);
    return { type: 'image', data: Buffer.from(data).toString('base64'), format, expected_tokens: expected ?? null };
  }
  if (field === 3) {
    let dmel: Uint8Array = new Uint8Array(0);
    while (!s.done()) {
      const t = s.tag();
      if (t.field === 1 && t.wire === WIRE_LEN) dmel = s.bytes();
      else s.skip(t.wire);
    }
    return { type: 'dmel', dmel: Buffer.from(dmel).toString('base64') };
  }
  throw new ProtoDecodeError(`unknown Chunk kind (field ${field})`);
}

function readDatum(r: ProtoReader): Datum {
  const chunks: ModelInputChunk[] = [];
  const inputs: Record<string, TensorData> = {};
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === WIRE_LEN) {
      const c = r.sub();
      chunks.push(readChunk(c));
    } else if (field === 2 && wire === WIRE_LEN) {
      const e = r.sub();
      let key = '';
      let value: TensorData | undefined;
      while (!e.done()) {
        const t = e.tag();
        if (t.field === 1 && t.wire === WIRE_LEN) key = e.string();
        else if (t.field === 2 && t.wire === WIRE_LEN) value = readTensor(e.sub());
        else e.skip(t.wire);
      }
      if (!value) throw new ProtoDecodeError(`loss_fn_inputs["${key}"] has no tensor`);
      inputs[key] = value;
    } else r.skip(wire);
  }
  return { model_input: { chunks }, loss_fn_inputs: inputs };
}

function readDoubleMapEntry(r: ProtoReader): [string, number] {
  let key = '';
  let value = 0;
  while (!r.done()) {
    const t = r.tag();
    if (t.field === 1 && t.wire === WIRE_LEN) key = r.string();
    else if (t.field === 2 && t.wire === 1) value = r.fixed64Double();
    else r.skip(t.wire);
  }
  return [key, value];
}

export function decodeForwardBackwardRequest(bytes: Uint8Array): ForwardBackwardRequestData {
  const r = new ProtoReader(bytes);
  const req: ForwardBackwardRequestData = { model_id: '', seq_id: 0, data: [], loss_fn: 'cross_entropy', forward_only: false };
  let lossFn = '';
  const config: Record<string, number> = {};
  let hasConfig = false;
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === WIRE_LEN) req.model_id = r.string();
    else if (field === 2) req.seq_id = r.int32();
    else if (field === 3 && wire === WIRE_LEN) req.data.push(readDatum(r.sub()));
    else if (field === 4 && wire === WIRE_LEN) lossFn = r.string();
    else if (field === 5 && wire === WIRE_LEN) {
      const [k, v] = readDoubleMapEntry(r.sub());
      config[k] = v;
      hasConfig = true;
    } else if (field === 6) req.forward_only = r.varint() !== 0;
    else r.skip(wire);
  }
  if (!(LOSS_FNS as readonly string[]).includes(lossFn)) {
    throw new ProtoDecodeError(`loss_fn "${lossFn}" is not one of ${LOSS_FNS.join(', ')}`);
  }
  req.loss_fn = lossFn as LossFnType;
  req.loss_fn_config = hasConfig ? config : null;
  return req;
}

// ---------- ForwardBackwardOutput ----------

/**
 * Encodes per-datum outputs as one ArrayRecord whose fields are BatchedTensors (all datums of a
 * field concatenated, byte offsets per datum). Every datum must have the same fields.
 */
export function encodeForwardBackwardOutput(out: ForwardBackwardOutput): Uint8Array {
  const w = new ProtoWriter(1024);
  w.stringField(1, out.loss_fn_output_type || 'ArrayRecord');
  const n = out.loss_fn_outputs.length;
  if (n > 0) {
    const names = Object.keys(out.loss_fn_outputs[0]!);
    w.messageField(2, (rec) => {
      for (const name of names) {
        rec.messageField(2, (e) => {
          e.stringField(1, name);
          e.messageField(2, (bt) => {
            const first = out.loss_fn_outputs[0]![name]!;
            const parts: Uint8Array[] = [];
            const offsets = new BigInt64Array(n + 1);
            let total = 0;
            for (let i = 0; i < n; i++) {
              const t = out.loss_fn_outputs[i]![name];
              if (!t) throw new Error(`loss_fn_outputs[${i}] lacks the field "${name}" that datum 0 has`);
              const b = valuesBytes(t.data, t.dtype);
              parts.push(b);
              total += b.length;
              offsets[i + 1] = BigInt(total);
            }
            const data = new Uint8Array(total);
            let at = 0;
            for (const p of parts) {
              data.set(p, at);
              at += p.length;
            }
            bt.bytesField(1, data);
            bt.bytesField(2, new Uint8Array(offsets.buffer));
            bt.varintField(3, dtypeToProto(first.dtype));
            const trailing = first.shape && first.shape.length > 1 ? first.shape.slice(1) : [];
            if (trailing.length) bt.packedVarints(4, trailing);
          });
        });
      }
      rec.varintField(3, n);
    });
  }
  for (const [k, v] of Object.entries(out.metrics)) {
    w.messageField(3, (e) => {
      e.stringField(1, k);
      e.doubleField(2, v);
    });
  }
  return w.finish();
}

interface BatchedField {
  data: Uint8Array;
  offsets: number[];
  dtype: number;
  trailing: number[];
}

function readBatchedTensor(r: ProtoReader): BatchedField {
  const f: BatchedField = { data: new Uint8Array(0), offsets: [], dtype: 0, trailing: [] };
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === WIRE_LEN) f.data = r.bytes();
    else if (field === 2 && wire === WIRE_LEN) f.offsets = decodeInt64(r.bytes());
    else if (field === 3) f.dtype = r.varint();
    else if (field === 4) r.repeatedVarints(wire, f.trailing);
    else r.skip(wire);
  }
  return f;
}

function sliceField(name: string, f: BatchedField, k: number): TensorData {
  const start = f.offsets[k];
  const end = f.offsets[k + 1];
  if (start === undefined || end === undefined || end < start || end > f.data.length) {
    throw new ProtoDecodeError(`field "${name}": offsets do not cover datum ${k}`);
  }
  const bytes = f.data.subarray(start, end);
  let dtype: DType;
  let values: Float32Array | Int32Array | number[];
  switch (f.dtype) {
    case PROTO_DTYPE.FLOAT32:
      dtype = 'float32';
      values = decodeFloat32(bytes);
      break;
    case PROTO_DTYPE.INT64:
      dtype = 'int64';
      values = decodeInt64(bytes);
      break;
    case PROTO_DTYPE.INT32:
      dtype = 'int64';
      values = Array.from(decodeInt32(bytes));
      break;
    case PROTO_DTYPE.BFLOAT16:
      dtype = 'float32';
      values = decodeBfloat16(bytes);
      break;
    default:
      throw new ProtoDecodeError(`field "${name}": unknown dtype ${f.dtype}`);
  }
  const inner = f.trailing.reduce((a, b) => a * b, 1);
  return { dtype, data: values, shape: [inner ? values.length / inner : 0, ...f.trailing] };
}

export function decodeForwardBackwardOutput(bytes: Uint8Array): ForwardBackwardOutput {
  const r = new ProtoReader(bytes);
  let type = '';
  const outputs: Array<Record<string, TensorData>> = [];
  const metrics: Record<string, number> = {};
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === WIRE_LEN) type = r.string();
    else if (field === 2 && wire === WIRE_LEN) {
      const rec = r.sub();
      const fields = new Map<string, BatchedField>();
      let numDatums = 0;
      while (!rec.done()) {
        const t = rec.tag();
        if (t.field === 2 && t.wire === WIRE_LEN) {
          const e = rec.sub();
          let key = '';
          let bt: BatchedField | undefined;
          while (!e.done()) {
            const et = e.tag();
            if (et.field === 1 && et.wire === WIRE_LEN) key = e.string();
            else if (et.field === 2 && et.wire === WIRE_LEN) bt = readBatchedTensor(e.sub());
            else e.skip(et.wire);
          }
          if (bt) fields.set(key, bt);
        } else if (t.field === 3) numDatums = rec.varint();
        else rec.skip(t.wire);
      }
      if (numDatums === 0) {
        const firstField = fields.values().next().value;
        numDatums = firstField ? Math.max(0, firstField.offsets.length - 1) : 0;
      }
      for (let k = 0; k < numDatums; k++) {
        const d: Record<string, TensorData> = {};
        for (const [name, f] of fields) d[name] = sliceField(name, f, k);
        outputs.push(d);
      }
    } else if (field === 3 && wire === WIRE_LEN) {
      const [k, v] = readDoubleMapEntry(r.sub());
      metrics[k] = v;
    } else r.skip(wire);
  }
  const short = (type || 'ArrayRecord').split(':').pop() ?? 'ArrayRecord';
  return { loss_fn_output_type: short, loss_fn_outputs: outputs, metrics };
}

// ---------- SampleResponse ----------

export function encodeSampleResponse(res: SampleResponse): Uint8Array {
  const w = new ProtoWriter(256);
  for (const s of res.sequences) {
    w.messageField(1, (sw) => {
      if (s.stop_reason === 'length') sw.varintField(1, 1);
      sw.bytesField(2, int32Bytes(s.tokens));
      if (s.logprobs != null) sw.bytesField(3, float32Bytes(s.logprobs));
    });
  }
  if (res.prompt_logprobs != null) {
    w.bytesField(2, float32Bytes(res.prompt_logprobs.map((v) => (v === null ? NaN : v))));
  }
  if (res.topk_prompt_logprobs != null) {
    const rows = res.topk_prompt_logprobs;
    const k = rows.reduce((m, row) => Math.max(m, row ? row.length : 0), 0);
    const ids = new Int32Array(rows.length * k);
    const lps = new Float32Array(rows.length * k).fill(TOPK_EMPTY_LOGPROB);
    rows.forEach((row, i) => row?.forEach(([id, lp], j) => {
      ids[i * k + j] = id;
      lps[i * k + j] = lp;
    }));
    w.messageField(3, (tw) => {
      tw.bytesField(1, new Uint8Array(ids.buffer));
      tw.bytesField(2, new Uint8Array(lps.buffer));
      if (k) tw.varintField(3, k);
      if (rows.length) tw.varintField(4, rows.length);
    });
  }
  if (res.prompt_cache_hit_tokens) w.varintField(4, res.prompt_cache_hit_tokens);
  return w.finish();
}

function readSequence(r: ProtoReader): SampledSequence {
  let stop = 0;
  let tokens: number[] = [];
  let logprobs: number[] | null = null;
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (field === 1) stop = r.varint();
    else if (field === 2 && wire === WIRE_LEN) tokens = Array.from(decodeInt32(r.bytes()));
    else if (field === 3 && wire === WIRE_LEN) logprobs = Array.from(decodeFloat32(r.bytes()));
    else r.skip(wire);
  }
  // a stop reason this client does not know is kept (as its number), not a failed response
  return { stop_reason: stop === 1 ? 'length' : stop === 0 ? 'stop' : `stop_reason_${stop}`, tokens, logprobs };
}

export function decodeSampleResponse(bytes: Uint8Array): SampleResponse {
  const r = new ProtoReader(bytes);
  const res: SampleResponse = { type: 'sample', sequences: [], prompt_logprobs: null, topk_prompt_logprobs: null, prompt_cache_hit_tokens: 0 };
  while (!r.done()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === WIRE_LEN) res.sequences.push(readSequence(r.sub()));
    else if (field === 2 && wire === WIRE_LEN) {
      res.prompt_logprobs = Array.from(decodeFloat32(r.bytes()), (v) => (Number.isNaN(v) ? null : v));
    } else if (field === 3 && wire === WIRE_LEN) {
      const t = r.sub();
      let ids: Int32Array = new Int32Array(0);
      let lps: Float32Array = new Float32Array(0);
      let k = 0;
      let n = 0;
      while (!t.done()) {
        const tt = t.tag();
        if (tt.field === 1 && tt.wire === WIRE_LEN) ids = decodeInt32(t.bytes());
        else if (tt.field === 2 && tt.wire === WIRE_LEN) lps = decodeFloat32(t.bytes());
        else if (tt.field === 3) k = t.varint();
        else if (tt.field === 4) n = t.varint();
        else t.skip(tt.wire);
      }
      const rows: Array<Array<[number, number]> | null> = [];
      if (n > 0 && k > 0) {
        if (ids.length < n * k || lps.length < n * k) throw new ProtoDecodeError('topk_prompt_logprobs is shorter than prompt_length × k');
        for (let i = 0; i < n; i++) {
          const isEmpty = (j: number) => ids[i * k + j] === 0 && lps[i * k + j] === TOPK_EMPTY_LOGPROB;
          if (isEmpty(0)) {
            rows.push(null);
            continue;
          }
          let len = k;
          while (len > 0 && isEmpty(len - 1)) len--;
          const row: Array<[number, number]> = [];
          for (let j = 0; j < len; j++) row.push([ids[i * k + j]!, lps[i * k + j]!]);
          rows.push(row);
        }
      }
      res.topk_prompt_logprobs = rows;
    } else if (field === 4) res.prompt_cache_hit_tokens = r.int32();
    else r.skip(wire);
  }
  return res;
}
