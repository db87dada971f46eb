// A minimal WebAssembly binary writer: just enough (i32/f32 scalar ops, a few f32x4 SIMD ops,
// structured control flow, one imported memory) to generate the GEMM kernel at run time, so the
// repository holds no generated .wasm and the build needs no assembler.

export const I32 = 0x7f;
export const F32 = 0x7d;
export const V128 = 0x7b;
export type ValType = typeof I32 | typeof F32 | typeof V128;

function uleb(out: number[], v: number): void {
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
}

function sleb(out: number[], v: number): void {
  for (;;) {
    const byte = v & 0x7f;
    v >>= 7;
    const done = (v === 0 && (byte & 0x40) === 0) || (v === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return;
  }
}

function name(out: number[], s: string): void {
  const b = Buffer.from(s, 'utf8');
  uleb(out, b.length);
  for (const x of b) out.push(x);
}

/** A local variable or parameter, by index. */
export type Local = number;

/** One function body under construction; methods append instructions in stack-machine order. */
export class FnBuilder {
  readonly code: number[] = [];
  private readonly extraLocals: ValType[] = [];
  constructor(
    readonly exportName: string | undefined,
    readonly params: ValType[],
    readonly results: ValType[],
  ) {}

  param(i: number): Local {
    return i;
  }
  local(t: ValType): Local {
    this.extraLocals.push(t);
    return this.params.length + this.extraLocals.length - 1;
  }
  locals(): ValType[] {
    return this.extraLocals;
  }

  private op(...bytes: number[]): this {
    this.code.push(...bytes);
    return this;
  }
  private simd(opcode: number): this {
    this.code.push(0xfd);
    uleb(this.code, opcode);
    return this;
  }
  private memarg(align: number, offset: number): this {
    uleb(this.code, align);
    uleb(this.code, offset);
    return this;
  }

  get(l: Local): this {
    this.op(0x20);
    uleb(this.code, l);
    return this;
  }
  set(l: Local): this {
    this.op(0x21);
    uleb(this.code, l);
    return this;
  }
  tee(l: Local): this {
    this.op(0x22);
    uleb(this.code, l);
    return this;
  }
  i32(v: number): this {
    this.op(0x41);
    sleb(this.code, v | 0);
    return this;
  }
  f32(v: number): this {
    this.op(0x43);
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    for (const x of b) this.code.push(x);
    return this;
  }
  add(): this {
    return this.op(0x6a);
  }
  sub(): this {
    return this.op(0x6b);
  }
  mul(): this {
    return this.op(0x6c);
  }
  /** i32.rem_s */
  rem(): this {
    return this.op(0x6f);
  }
  ltS(): this {
    return this.op(0x48);
  }
  gtS(): this {
    return this.op(0x4a);
  }
  geS(): this {
    return this.op(0x4e);
  }
  eq(): this {
    return this.op(0x46);
  }
  ne(): this {
    return this.op(0x47);
  }
  eqz(): this {
    return this.op(0x45);
  }
  or(): this {
    return this.op(0x72);
  }
  and(): this {
    return this.op(0x71);
  }
  select(): this {
    return this.op(0x1b);
  }
  f32Add(): this {
    return this.op(0x92);
  }
  f32Mul(): this {
    return this.op(0x94);
  }
  f32Load(offset = 0): this {
    return this.op(0x2a).memarg(2, offset);
  }
  f32Store(offset = 0): this {
    return this.op(0x38).memarg(2, offset);
  }
  v128Load(offset = 0): this {
    return this.simd(0x00).memarg(4, offset);
  }
  v128Store(offset = 0): this {
    return this.simd(0x0b).memarg(4, offset);
  }
  load32Splat(offset = 0): this {
    return this.simd(0x09).memarg(2, offset);
  }
  v128Zero(): this {
    this.simd(0x0c);
    for (let i = 0; i < 16; i++) this.code.push(0);
    return this;
  }
  f32x4Splat(): this {
    return this.simd(0x13);
  }
  f32x4ExtractLane(lane: number): this {
    this.simd(0x1f);
    this.code.push(lane);
    return this;
  }
  f32x4Add(): this {
    return this.simd(0xe4);
  }
  f32x4Mul(): this {
    return this.simd(0xe6);
  }
  call(fn: number): this {
    this.op(0x10);
    uleb(this.code, fn);
    return this;
  }
  /** block ... end; `br(depth)` inside jumps past end */
  block(body: () => void): this {
    this.op(0x02, 0x40);
    body();
    return this.op(0x0b);
  }
  /** loop ... end; `br(depth)` inside jumps back to the start */
  loop(body: () => void): this {
    this.op(0x03, 0x40);
    body();
    return this.op(0x0b);
  }
  /** if (pops an i32) ... else ... end */
  ifElse(then: () => void, otherwise?: () => void): this {
    this.op(0x04, 0x40);
    then();
    if (otherwise) {
      this.op(0x05);
      otherwise();
    }
    return this.op(0x0b);
  }
  br(depth: number): this {
    this.op(0x0c);
    uleb(this.code, depth);
    return this;
  }
  brIf(depth: number): this {
    this.op(0x0d);
    uleb(this.code, depth);
    return this;
  }

  /** for (v = from; v < limit; v += step) body — `from`, `limit`, `step` push one i32 each. */
  forRange(v: Local, from: () => void, limit: () => void, step: () => void, body: () => void): this {
    from();
    this.set(v);
    return this.block(() => {
      this.loop(() => {
        this.get(v);
        limit();
        this.geS().brIf(1);
        body();
        this.get(v);
        step();
        this.add().set(v).br(0);
      });
    });
  }
}

export interface MemoryImport {
  pages: number;
  shared: boolean;
}

/** Encodes a module importing env.memory and defining `fns` (function index = position). */
export function encodeModule(memory: MemoryImport, fns: FnBuilder[]): Uint8Array {
  const out: number[] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  const section = (id: number, body: number[]): void => {
    out.push(id);
    uleb(out, body.length);
    out.push(...body);
  };
  const types: number[] = [];
  uleb(types, fns.length);
  for (const f of fns) {
    types.push(0x60);
    uleb(types, f.params.length);
    types.push(...f.params);
    uleb(types, f.results.length);
    types.push(...f.results);
  }
  section(1, types);
  const imports: number[] = [1];
  name(imports, 'env');
  name(imports, 'memory');
  imports.push(0x02, memory.shared ? 0x03 : 0x01);
  uleb(imports, memory.pages);
  uleb(imports, memory.pages);
  section(2, imports);
  const funcs: number[] = [];
  uleb(funcs, fns.length);
  fns.forEach((_, i) => uleb(funcs, i));
  section(3, funcs);
  const exported = fns.map((f, i) => [f.exportName, i] as const).filter((e): e is readonly [string, number] => e[0] !== undefined);
  const exports: number[] = [];
  uleb(exports, exported.length);
  for (const [n, i] of exported) {
    name(exports, n);
    exports.push(0x00);
    uleb(exports, i);
  }
  section(7, exports);
  const code: number[] = [];
  uleb(code, fns.length);
  for (const f of fns) {
    const body: number[] = [];
    const locals = f.locals();
    uleb(body, locals.length);
    for (const t of locals) body.push(1, t);
    body.push(...f.code, 0x0b);
    uleb(code, body.length);
    code.push(...body);
  }
  section(10, code);
  return Uint8Array.from(out);
}
