// Minimal protobuf wire-format primitives (proto3): a growable writer and a bounds-checked reader.
// Only what the Tinker messages need: varints, fixed64 doubles, length-delimited fields.

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
export const WIRE_FIXED32 = 5;

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

export class ProtoWriter {
  private buf: Uint8Array;
  private view: DataView;
  pos = 0;

  constructor(initialSize = 256) {
    this.buf = new Uint8Array(initialSize);
    this.view = new DataView(this.buf.buffer);
  }

  private ensure(extra: number): void {
    if (this.pos + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  /** Unsigned varint of a non-negative integer up to 2^53 (larger values need bigint). */
  varint(value: number): void {
    this.ensure(10);
    let v = value;
    if (v < 0) {
      // two's complement over 64 bits (int32/int64 negatives take 10 bytes)
      this.bigVarint(BigInt.asUintN(64, BigInt(Math.trunc(v))));
      return;
    }
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
  }

  bigVarint(value: bigint): void {
    this.ensure(10);
    let v = value;
    while (v >= 0x80n) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
  }

  tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  bytesField(field: number, bytes: Uint8Array): void {
    this.tag(field, WIRE_LEN);
    this.varint(bytes.length);
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  stringField(field: number, s: string): void {
    this.bytesField(field, utf8Encoder.encode(s));
  }

  doubleField(field: number, v: number): void {
    this.tag(field, WIRE_FIXED64);
    this.ensure(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  varintField(field: number, v: number): void {
    this.tag(field, WIRE_VARINT);
    this.varint(v);
  }

  /**
   * A nested message written by `write` into a scratch writer, then copied in length-delimited. The
   * scratch writer is reused for every nested message of this writer (its contents are copied out
   * at once), so a thousand datums do not allocate and regrow a thousand small buffers.
   */
  messageField(field: number, write: (w: ProtoWriter) => void, scratch?: ProtoWriter): void {
    const s = scratch ?? (this.child ??= new ProtoWriter(64));
    s.pos = 0;
    write(s);
    this.bytesField(field, s.finish());
  }
  private child: ProtoWriter | undefined;

  /** Packed repeated varints (proto3 default for repeated scalars). */
  packedVarints(field: number, values: readonly number[]): void {
    if (values.length === 0) return;
    const w = new ProtoWriter(values.length * 2 + 8);
    for (const v of values) w.varint(v);
    this.bytesField(field, w.finish());
  }

  finish(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

export class ProtoDecodeError extends Error {
  constructor(message: string) {
    super(`protobuf: ${message}`);
    this.name = 'ProtoDecodeError';
  }
}

/** A 64-bit two's-complement value from its unsigned 32-bit halves. */
function int64ToNumber(lo: number, hi: number): number {
  if (hi < 0x80000000) return hi * 0x1_0000_0000 + lo;
  // negative: -(~value + 1), computed on the halves
  const nlo = ~lo >>> 0;
  const nhi = ~hi >>> 0;
  return -(nhi * 0x1_0000_0000 + nlo + 1);
}

export class ProtoReader {
  pos: number;
  private readonly view: DataView;

  constructor(
    readonly buf: Uint8Array,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  done(): boolean {
    return this.pos >= this.end;
  }

  /**
   * A varint as a number: unsigned, or a negative int32/int64 (64-bit two's complement). The two
   * 32-bit halves are assembled with integer arithmetic, so every value within ±2^53 is exact
   * (summing in floating point would round -1 = 2^64 - 1 to 2^64, i.e. to 0); beyond that the
   * nearest double.
   */
  varint(): number {
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new ProtoDecodeError('truncated varint');
      const b = this.buf[this.pos++]!;
      const bits = b & 0x7f;
      if (i < 4) lo |= bits << (7 * i);
      else if (i === 4) {
        lo |= bits << 28; // the low 4 bits land in lo (the rest is shifted out)
        hi = bits >>> 4;
      } else hi |= bits << (7 * i - 32);
      if (b < 0x80) return int64ToNumber(lo >>> 0, hi >>> 0);
    }
    throw new ProtoDecodeError('varint longer than 10 bytes');
  }

  /** An int32 field: negative values are encoded as 64-bit two's complement. */
  int32(): number {
    const v = this.varint();
    return v > 0x7fffffff ? (v | 0) : v;
  }

  fixed64Double(): number {
    if (this.pos + 8 > this.end) throw new ProtoDecodeError('truncated double');
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /** Length-delimited payload as a view (no copy). */
  bytes(): Uint8Array {
    const len = this.varint();
    if (this.pos + len > this.end) throw new ProtoDecodeError(`length ${len} runs past the end of the message`);
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }

  string(): string {
    try {
      return utf8Decoder.decode(this.bytes());
    } catch (err) {
      if (err instanceof ProtoDecodeError) throw err;
      throw new ProtoDecodeError('a string field is not valid UTF-8');
    }
  }

  /** Reader over a nested message. */
  sub(): ProtoReader {
    const b = this.bytes();
    return new ProtoReader(b);
  }

  tag(): { field: number; wire: number } {
    const t = this.varint();
    return { field: Math.floor(t / 8), wire: t & 7 };
  }

  skip(wire: number): void {
    switch (wire) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_FIXED64:
        this.pos += 8;
        break;
      case WIRE_LEN:
        this.bytes();
        return;
      case WIRE_FIXED32:
        this.pos += 4;
        break;
      default:
        throw new ProtoDecodeError(`unsupported wire type ${wire}`);
    }
    if (this.pos > this.end) throw new ProtoDecodeError('truncated field');
  }

  /** Repeated varints, packed or not (decoders must accept both). */
  repeatedVarints(wire: number, into: number[]): void {
    if (wire === WIRE_LEN) {
      const r = this.sub();
      while (!r.done()) into.push(r.varint());
    } else if (wire === WIRE_VARINT) {
      into.push(this.varint());
    } else {
      throw new ProtoDecodeError(`repeated varint field has wire type ${wire}`);
    }
  }
}
