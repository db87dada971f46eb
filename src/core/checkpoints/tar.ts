// Unpacks a POSIX tar file (ustar, with pax and GNU long names) from disk into a folder, reading it
// in pieces so a multi-gigabyte archive never sits in memory. Only regular files and folders are
// written; an entry that would land outside the folder (absolute, or with "..") is refused.
import * as fs from 'node:fs';
import * as path from 'node:path';

const BLOCK = 512;
const COPY_CHUNK = 1 << 20;

export class TarFormatError extends Error {}

function text(b: Buffer, at: number, len: number): string {
  const s = b.subarray(at, at + len);
  const end = s.indexOf(0);
  return s.subarray(0, end < 0 ? s.length : end).toString('utf8');
}

/** A header number: octal text, or base-256 when the high bit of the first byte is set. */
function num(b: Buffer, at: number, len: number): number {
  if (b[at]! & 0x80) {
    let v = b[at]! & 0x7f;
    for (let i = 1; i < len; i++) v = v * 256 + b[at + i]!;
    return v;
  }
  const t = text(b, at, len).trim();
  const v = t === '' ? 0 : parseInt(t, 8);
  if (!Number.isFinite(v)) throw new TarFormatError(`bad number "${t}" in a tar header`);
  return v;
}

function checksumOk(h: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
  return sum === num(h, 148, 8);
}

function paxPath(body: Buffer): string | undefined {
  let at = 0;
  let found: string | undefined;
  while (at < body.length) {
    const sp = body.indexOf(0x20, at);
    if (sp < 0) break;
    const len = Number(body.subarray(at, sp).toString('ascii'));
    if (!(len > 0)) break;
    const rec = body.subarray(sp + 1, at + len - 1).toString('utf8');
    const eq = rec.indexOf('=');
    if (eq > 0 && rec.slice(0, eq) === 'path') found = rec.slice(eq + 1);
    at += len;
  }
  return found;
}

/** The destination of an entry inside `root`, or an error for a name that escapes it. */
function safeTarget(root: string, name: string): string {
  const clean = name.replace(/\\/g, '/');
  if (clean.startsWith('/') || /^[A-Za-z]:/.test(clean) || clean.split('/').includes('..')) {
    throw new TarFormatError(`the archive entry "${name}" would be written outside the download folder; refusing it`);
  }
  return path.join(root, clean);
}

/** Unpacks `tarFile` into `dest` (created if missing); returns the files written, relative to `dest`. */
export async function extractTar(tarFile: string, dest: string, signal?: AbortSignal): Promise<string[]> {
  const fh = await fs.promises.open(tarFile, 'r');
  const files: string[] = [];
  try {
    await fs.promises.mkdir(dest, { recursive: true });
    const header = Buffer.alloc(BLOCK);
    let pos = 0;
    let longName: string | undefined;
    const readBody = async (size: number): Promise<Buffer> => {
      const b = Buffer.alloc(size);
      const { bytesRead } = await fh.read(b, 0, size, pos);
      if (bytesRead < size) throw new TarFormatError('the archive ends in the middle of an entry');
      return b;
    };
    for (;;) {
      signal?.throwIfAborted();
      const { bytesRead } = await fh.read(header, 0, BLOCK, pos);
      if (bytesRead === 0) break;
      if (bytesRead < BLOCK) throw new TarFormatError('the archive ends in the middle of a header');
      if (header.every((x) => x === 0)) break;
      if (!checksumOk(header)) throw new TarFormatError(`the tar header at byte ${pos} is damaged (checksum mismatch)`);
      const size = num(header, 124, 12);
      const type = String.fromCharCode(header[156]!) || '0';
      const prefix = text(header, 345, 155);
      const name = longName ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
      pos += BLOCK;
      const padded = Math.ceil(size / BLOCK) * BLOCK;
      if (type === 'L') {
        longName = (await readBody(size)).toString('utf8').replace(/\0+$/, '');
      } else if (type === 'x') {
        longName = paxPath(await readBody(size)) ?? longName;
      } else if (type === 'g') {
        // global pax attributes: nothing here that changes where files go
      } else {
        longName = undefined;
        if (type === '5') {
          await fs.promises.mkdir(safeTarget(dest, name), { recursive: true });
        } else if (type === '0' || type === '\0' || type === '7') {
          const target = safeTarget(dest, name);
          await fs.promises.mkdir(path.dirname(target), { recursive: true });
          const out = await fs.promises.open(target, 'w');
          try {
            const buf = Buffer.alloc(Math.min(COPY_CHUNK, Math.max(size, 1)));
            for (let left = size, at = pos; left > 0; ) {
              signal?.throwIfAborted();
              const n = Math.min(left, buf.length);
              const r = await fh.read(buf, 0, n, at);
              if (r.bytesRead < n) throw new TarFormatError(`the archive ends in the middle of "${name}"`);
              await out.write(buf, 0, n);
              left -= n;
              at += n;
            }
          } finally {
            await out.close();
          }
          files.push(path.relative(dest, target).split(path.sep).join('/'));
        }
        // links, devices and fifos are not part of a checkpoint: skipped
      }
      pos += padded;
    }
    return files;
  } finally {
    await fh.close();
  }
}
