// Safetensors read and written as streams: the header first, then one tensor (or one slice of rows of
// a tensor) at a time, so a merge never holds a whole shard, whatever the model's size. Format: an
// 8-byte little-endian header length, a JSON header { name: {dtype, shape, data_offsets} }, the data.
import * as fs from 'node:fs';
import { z } from 'zod';

export const FLOAT_DTYPES = ['F32', 'BF16', 'F16'] as const;
export type FloatDtype = (typeof FLOAT_DTYPES)[number];

const ITEM_SIZE: Readonly<Record<string, number>> = { F64: 8, F32: 4, BF16: 2, F16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1, F8_E4M3: 1, F8_E5M2: 1 };

/** Headers past this are not a model's (a real one is a few MB); refusing them avoids a huge read. */
const MAX_HEADER_BYTES = 100 * 1024 * 1024;

const TensorEntrySchema = z.object({
  dtype: z.string(),
  shape: z.array(z.number().int().nonnegative()),
  data_offsets: z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]),
});

export interface TensorInfo {
  name: string;
  dtype: string;
  shape: number[];
  /** bytes from the start of the data section */
  begin: number;
  end: number;
}

export interface SafetensorsHeader {
  file: string;
  /** where the data section starts in the file */
  dataStart: number;
  tensors: TensorInfo[];
  byName: Map<string, TensorInfo>;
  metadata: Record<string, string>;
}

export class SafetensorsError extends Error {
  constructor(file: string, detail: string) {
    super(`${file}: ${detail}`);
    this.name = 'SafetensorsError';
  }
}

export function itemSize(dtype: string): number | undefined {
  return ITEM_SIZE[dtype];
}

export function numel(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

async function readExactly(fd: fs.promises.FileHandle, length: number, position: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await fd.read(buf, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  if (done < length) throw new Error(`ended after ${done} of ${length} bytes at offset ${position}`);
  return buf;
}

/** Reads and checks a file's header: every tensor's byte range must match its dtype and shape and lie in the file. */
export async function readHeader(file: string): Promise<SafetensorsHeader> {
  const fd = await fs.promises.open(file, 'r');
  try {
    const size = (await fd.stat()).size;
    if (size < 8) throw new SafetensorsError(file, `is ${size} bytes, too short for a safetensors file`);
    const n = Number((await readExactly(fd, 8, 0)).readBigUInt64LE(0));
    if (n > MAX_HEADER_BYTES || 8 + n > size) throw new SafetensorsError(file, `header length ${n} does not fit the file (${size} bytes): not a safetensors file, or truncated`);
    let json: unknown;
    try {
      json = JSON.parse((await readExactly(fd, n, 8)).toString('utf8'));
    } catch (err) {
      throw new SafetensorsError(file, `header is not JSON (${err instanceof Error ? err.message : String(err)})`);
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new SafetensorsError(file, 'header is not a JSON object');
    const dataStart = 8 + n;
    const tensors: TensorInfo[] = [];
    let metadata: Record<string, string> = {};
    for (const [name, value] of Object.entries(json)) {
      if (name === '__metadata__') {
        const m = z.record(z.string(), z.string()).safeParse(value);
        if (!m.success) throw new SafetensorsError(file, '__metadata__ must map strings to strings');
        metadata = m.data;
        continue;
      }
      const e = TensorEntrySchema.safeParse(value);
      if (!e.success) throw new SafetensorsError(file, `tensor "${name}": ${e.error.issues.map((i) => `${i.path.join('.') || 'entry'} ${i.message}`).join('; ')}`);
      const { dtype, shape, data_offsets: [begin, end] } = e.data;
      const item = ITEM_SIZE[dtype];
      if (item === undefined) throw new SafetensorsError(file, `tensor "${name}" has dtype ${dtype}, which is not a safetensors dtype`);
      if (end - begin !== numel(shape) * item) throw new SafetensorsError(file, `tensor "${name}": data_offsets [${begin}, ${end}] hold ${end - begin} bytes, but ${dtype} ${JSON.stringify(shape)} needs ${numel(shape) * item}`);
      if (dataStart + end > size) throw new SafetensorsError(file, `tensor "${name}" ends at byte ${dataStart + end}, past the end of the file (${size} bytes): truncated`);
      tensors.push({ name, dtype, shape, begin, end });
    }
    tensors.sort((a, b) => a.begin - b.begin);
    return { file, dataStart, tensors, byName: new Map(tensors.map((t) => [t.name, t])), metadata };
  } finally {
    await fd.close();
  }
}

/** A file opened for reading tensors (or row slices of them) by their header. */
export class SafetensorsReader {
  private constructor(
    readonly header: SafetensorsHeader,
    private readonly fd: fs.promises.FileHandle,
  ) {}

  static async open(file: string): Promise<SafetensorsReader> {
    const header = await readHeader(file);
    return new SafetensorsReader(header, await fs.promises.open(file, 'r'));
  }

  info(name: string): TensorInfo {
    const t = this.header.byName.get(name);
    if (!t) throw new SafetensorsError(this.header.file, `has no tensor "${name}"`);
    return t;
  }

  /** Bytes [from, to) of a tensor's data. */
  async readBytes(t: TensorInfo, from = 0, to = t.end - t.begin): Promise<Buffer> {
    return readExactly(this.fd, to - from, this.header.dataStart + t.begin + from);
  }

  /** A whole tensor as float32 (for LoRA matrices, which are small). */
  async readFloat32(name: string): Promise<Float32Array> {
    const t = this.info(name);
    if (!isFloatDtype(t.dtype)) throw new SafetensorsError(this.header.file, `tensor "${name}" is ${t.dtype}; only ${FLOAT_DTYPES.join(', ')} are read as numbers`);
    return toFloat32(await this.readBytes(t), t.dtype);
  }

  async close(): Promise<void> {
    await this.fd.close();
  }
}

export function isFloatDtype(dtype: string): dtype is FloatDtype {
  return (FLOAT_DTYPES as readonly string[]).includes(dtype);
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE half → float (exact). */
function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** float32 bits → half, rounding to nearest even (as torch's `.to(float16)`). */
function floatToHalf(x: number): number {
  f32[0] = x;
  const bits = u32[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    let r = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    if (rest > half || (rest === half && r & 1)) r++;
    return sign | r;
  }
  let r = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && r & 1)) r++;
  return sign | r;
}

/** 16-bit words of little-endian bytes (the hosts Node runs on are little-endian); copied when unaligned. */
function halfWords(bytes: Buffer): Uint16Array {
  const src = bytes.byteOffset % 2 === 0 ? bytes : Buffer.from(bytes);
  return new Uint16Array(src.buffer, src.byteOffset, src.length / 2);
}

/** Decodes F32, BF16 or F16 little-endian bytes to float32. */
export function toFloat32(bytes: Buffer, dtype: FloatDtype): Float32Array {
  const n = bytes.length / (dtype === 'F32' ? 4 : 2);
  const out = new Float32Array(n);
  if (dtype === 'F32') {
    new Uint8Array(out.buffer).set(bytes);
  } else if (dtype === 'BF16') {
    const bits = new Uint32Array(out.buffer);
    const half = halfWords(bytes);
    for (let i = 0; i < n; i++) bits[i] = half[i]! << 16;
  } else {
    const half = halfWords(bytes);
    for (let i = 0; i < n; i++) out[i] = halfToFloat(half[i]!);
  }
  return out;
}

/** Encodes float32 values as F32, BF16 or F16 bytes, rounding to nearest even (as torch casts). */
export function fromFloat32(values: Float32Array, dtype: FloatDtype): Buffer {
  if (dtype === 'F32') return Buffer.from(values.buffer, values.byteOffset, values.byteLength);
  const out = Buffer.alloc(values.length * 2);
  const words = new Uint16Array(out.buffer, out.byteOffset, values.length);
  if (dtype === 'BF16') {
    const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
    for (let i = 0; i < values.length; i++) {
      const b = bits[i]!;
      // NaN stays a quiet NaN; otherwise round the low 16 bits to nearest, ties to even
      const h = (b & 0x7fffffff) > 0x7f800000 ? (b >>> 16) | 0x40 : (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
      words[i] = h & 0xffff;
    }
  } else {
    for (let i = 0; i < values.length; i++) words[i] = floatToHalf(values[i]!);
  }
  return out;
}

export interface TensorEntry {
  name: string;
  dtype: string;
  shape: number[];
}

/**
 * Writes a safetensors file tensor by tensor: the header (all offsets, known from dtypes and shapes) goes
 * first, then `write` appends each tensor's bytes in order, in as many pieces as the caller likes.
 */
export class SafetensorsWriter {
  private index = 0;
  private written = 0;

  private constructor(
    private readonly fd: fs.promises.FileHandle,
    readonly entries: readonly TensorEntry[],
    private readonly sizes: readonly number[],
    readonly file: string,
  ) {}

  static async create(file: string, entries: readonly TensorEntry[], metadata?: Record<string, string>): Promise<SafetensorsWriter> {
    const header: Record<string, unknown> = {};
    if (metadata) header.__metadata__ = metadata;
    let offset = 0;
    const sizes: number[] = [];
    for (const e of entries) {
      const item = ITEM_SIZE[e.dtype];
      if (item === undefined) throw new SafetensorsError(file, `cannot write tensor "${e.name}" of dtype ${e.dtype}`);
      const size = numel(e.shape) * item;
      header[e.name] = { dtype: e.dtype, shape: e.shape, data_offsets: [offset, offset + size] };
      sizes.push(size);
      offset += size;
    }
    let json = JSON.stringify(header);
    // pad to 8 bytes, as the reference writer does, so the data section is aligned
    json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
    const head = Buffer.alloc(8);
    head.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
    const fd = await fs.promises.open(file, 'w');
    try {
      await fd.write(head);
      await fd.write(Buffer.from(json, 'utf8'));
    } catch (err) {
      await fd.close();
      throw err;
    }
    const w = new SafetensorsWriter(fd, entries, sizes, file);
    w.skipEmpty();
    return w;
  }

  /** Zero-byte tensors (an empty placeholder) are complete as soon as they are reached. */
  private skipEmpty(): void {
    while (this.index < this.sizes.length && this.written === this.sizes[this.index]) {
      this.index++;
      this.written = 0;
    }
  }

  /** Appends bytes of the current tensor; moves to the next when this one is complete. */
  async write(bytes: Uint8Array): Promise<void> {
    const size = this.sizes[this.index];
    if (size === undefined || this.written + bytes.byteLength > size) throw new SafetensorsError(this.file, `more bytes written than the header declares (tensor ${this.entries[this.index]?.name ?? 'past the last'})`);
    await this.fd.write(bytes);
    this.written += bytes.byteLength;
    this.skipEmpty();
  }

  /** Checks every tensor was written in full, flushes and closes. */
  async finish(): Promise<void> {
    try {
      if (this.index < this.entries.length) throw new SafetensorsError(this.file, `tensor "${this.entries[this.index]!.name}" was not written in full`);
      await this.fd.sync();
    } finally {
      await this.fd.close();
    }
  }

  async abandon(): Promise<void> {
    await this.fd.close().catch(() => undefined);
  }
}

/** Writes small tensors (an adapter's) in one go. */
export async function writeSafetensors(file: string, tensors: readonly (TensorEntry & { data: Buffer })[], metadata?: Record<string, string>): Promise<void> {
  const w = await SafetensorsWriter.create(file, tensors, metadata);
  try {
    for (const t of tensors) await w.write(t.data);
    await w.finish();
  } catch (err) {
    await w.abandon();
    throw err;
  }
}
