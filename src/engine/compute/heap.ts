// First-fit allocator over a fixed byte range of the kernel's WASM memory. The memory never grows,
// so views handed out over it never detach; when the range is full, callers fall back to ordinary
// (copied) arrays.

const ALIGN = 64;

interface Range {
  off: number;
  size: number;
}

export class Heap {
  /** free ranges sorted by offset, never adjacent (coalesced) */
  private free: Range[];
  private readonly live = new Map<number, number>();

  constructor(
    readonly start: number,
    readonly end: number,
  ) {
    const s = Math.ceil(start / ALIGN) * ALIGN;
    this.free = end > s ? [{ off: s, size: end - s }] : [];
  }

  /** Byte offset of `bytes` free bytes (64-byte aligned), or undefined when no range is big enough. */
  alloc(bytes: number): number | undefined {
    const size = Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
    const i = this.free.findIndex((r) => r.size >= size);
    if (i < 0) return undefined;
    const r = this.free[i]!;
    const off = r.off;
    if (r.size === size) this.free.splice(i, 1);
    else {
      r.off += size;
      r.size -= size;
    }
    this.live.set(off, size);
    return off;
  }

  release(off: number): void {
    const size = this.live.get(off);
    if (size === undefined) throw new Error(`compute heap: no live allocation at byte ${off} (freed twice, or not from allocF32)`);
    this.live.delete(off);
    let i = this.free.findIndex((r) => r.off > off);
    if (i < 0) i = this.free.length;
    this.free.splice(i, 0, { off, size });
    const next = this.free[i + 1];
    if (next && off + size === next.off) {
      this.free[i]!.size += next.size;
      this.free.splice(i + 1, 1);
    }
    const prev = this.free[i - 1];
    if (prev && prev.off + prev.size === off) {
      prev.size += this.free[i]!.size;
      this.free.splice(i, 1);
    }
  }

  /** bytes currently handed out */
  used(): number {
    let n = 0;
    for (const s of this.live.values()) n += s;
    return n;
  }

  largestFree(): number {
    return this.free.reduce((m, r) => Math.max(m, r.size), 0);
  }
}
