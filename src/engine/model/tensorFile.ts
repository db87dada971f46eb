// A small container for named float32 tensors with a JSON header, used for the engine's base weights
// and for LoRA states (weights + Adam moments). Layout: 8-byte magic, u32 LE header length, the JSON
// header (padded with spaces to a multiple of 4), then the tensors' float32 LE data in header order.
// Round trips are bit-exact.
import * as z from 'zod';
import { errorMessage } from '../../core/errors';

const TensorEntry = z.object({ name: z.string(), length: z.number().int().nonnegative() });
export type TensorEntry = z.infer<typeof TensorEntry>;

export interface TensorFile {
  meta: Record<string, unknown>;
  tensors: Map<string, Float32Array>;
}

const enc = new TextEncoder();

export function writeTensorFile(magic: string, meta: Record<string, unknown>, tensors: Map<string, Float32Array | Float64Array>): Uint8Array {
  if (magic.length !== 8) throw new Error('magic must be 8 characters');
  const entries: TensorEntry[] = [...tensors].map(([name, t]) => ({ name, length: t.length }));
  let header = enc.encode(JSON.stringify({ ...meta, tensors: entries }));
  const pad = (4 - ((12 + header.length) % 4)) % 4;
  if (pad) {
    const h = new Uint8Array(header.length + pad).fill(0x20);
    h.set(header);
    header = h;
  }
  const dataBytes = entries.reduce((a, e) => a + e.length * 4, 0);
  const out = new Uint8Array(12 + header.length + dataBytes);
  out.set(enc.encode(magic), 0);
  new DataView(out.buffer).setUint32(8, header.length, true);
  out.set(header, 12);
  const f32 = new Float32Array(out.buffer, 12 + header.length, dataBytes / 4);
  let at = 0;
  for (const [, t] of tensors) {
    f32.set(t, at);
    at += t.length;
  }
  return out;
}

export function readTensorFile(bytes: Uint8Array, magic: string, what: string): TensorFile {
  if (bytes.length < 12) throw new Error(`${what}: too short to be a ${magic} file (${bytes.length} bytes)`);
  const got = new TextDecoder().decode(bytes.subarray(0, 8));
  if (got !== magic) throw new Error(`${what}: not a ${magic} file (starts with "${got.replace(/[^\x20-\x7e]/g, '?')}")`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const hlen = view.getUint32(8, true);
  if (12 + hlen > bytes.length) throw new Error(`${what}: header length ${hlen} runs past the end of the file`);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + hlen)));
  } catch (err) {
    throw new Error(`${what}: the header is not JSON (${errorMessage(err)})`);
  }
  const parsed = z.looseObject({ tensors: z.array(TensorEntry) }).safeParse(header);
  if (!parsed.success) throw new Error(`${what}: bad header: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}`);
  const { tensors: entries, ...meta } = parsed.data;
  const total = entries.reduce((a, e) => a + e.length * 4, 0);
  if (12 + hlen + total !== bytes.length) {
    throw new Error(`${what}: expected ${12 + hlen + total} bytes for the tensors its header lists, found ${bytes.length}`);
  }
  // copy so that the tensors are aligned and independent of the input buffer
  const data = new Float32Array(bytes.slice(12 + hlen).buffer);
  const tensors = new Map<string, Float32Array>();
  let at = 0;
  for (const e of entries) {
    tensors.set(e.name, data.subarray(at, at + e.length));
    at += e.length;
  }
  return { meta, tensors };
}
