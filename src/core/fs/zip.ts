// A small ZIP reader and writer over node:zlib, for Inspect's `.eval` logs (a ZIP of JSON files).
// Reads the central directory (entries stored or deflated, as Inspect writes them); any other
// compression, a ZIP64 archive or a damaged record is an error naming the file and the entry.
import * as zlib from 'node:zlib';

export class ZipError extends Error {}

const EOCD_SIG = 0x06054b50;
const CEN_SIG = 0x02014b50;
const LOC_SIG = 0x04034b50;

// zlib.crc32 is newer than the oldest Node the extension host runs on
let crcTable: Uint32Array | undefined;
function crc32(b: Buffer): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let c = 0xffffffff;
  for (let i = 0; i < b.length; i++) c = crcTable[(c ^ b[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The entries of a ZIP archive, by name, inflated on read. */
export interface ZipArchive {
  names(): string[];
  has(name: string): boolean;
  /** the entry's bytes (throws ZipError when it is absent or cannot be inflated) */
  read(name: string): Buffer;
}

interface Entry {
  method: number;
  compressed: number;
  size: number;
  crc: number;
  localOffset: number;
}

/** Opens a ZIP archive held in memory; `label` names it in errors (the file's path). */
export function openZip(buf: Buffer, label: string): ZipArchive {
  // the end-of-central-directory record: 22 bytes plus a comment of at most 65,535
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (buf.readUInt32LE(i) === EOCD_SIG) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new ZipError(`${label}: not a ZIP archive (no end-of-central-directory record): an Inspect .eval log is a ZIP file`);
  const count = buf.readUInt16LE(eocd + 10);
  const cdOffset = buf.readUInt32LE(eocd + 16);
  if (count === 0xffff || cdOffset === 0xffffffff) throw new ZipError(`${label}: a ZIP64 archive, which is not supported`);
  const entries = new Map<string, Entry>();
  let p = cdOffset;
  for (let i = 0; i < count; i++) {
    if (p + 46 > buf.length || buf.readUInt32LE(p) !== CEN_SIG) throw new ZipError(`${label}: damaged central directory at entry ${i + 1} of ${count}`);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const name = buf.toString('utf8', p + 46, p + 46 + nameLen);
    entries.set(name, {
      method: buf.readUInt16LE(p + 10),
      crc: buf.readUInt32LE(p + 16),
      compressed: buf.readUInt32LE(p + 20),
      size: buf.readUInt32LE(p + 24),
      localOffset: buf.readUInt32LE(p + 42),
    });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return {
    names: () => [...entries.keys()],
    has: (name) => entries.has(name),
    read(name) {
      const e = entries.get(name);
      if (!e) throw new ZipError(`${label}: no entry ${name}`);
      const at = e.localOffset;
      if (at + 30 > buf.length || buf.readUInt32LE(at) !== LOC_SIG) throw new ZipError(`${label}: ${name}: damaged local header`);
      const start = at + 30 + buf.readUInt16LE(at + 26) + buf.readUInt16LE(at + 28);
      const raw = buf.subarray(start, start + e.compressed);
      if (raw.length < e.compressed) throw new ZipError(`${label}: ${name}: the archive is cut short`);
      let out: Buffer;
      if (e.method === 0) out = Buffer.from(raw);
      else if (e.method === 8) {
        try {
          out = zlib.inflateRawSync(raw);
        } catch (err) {
          throw new ZipError(`${label}: ${name}: cannot inflate (${err instanceof Error ? err.message : String(err)})`);
        }
      } else throw new ZipError(`${label}: ${name}: compression method ${e.method} is not supported (stored and deflated entries are); re-save the log with \`inspect log convert --to json\``);
      if (out.length !== e.size || crc32(out) !== e.crc) throw new ZipError(`${label}: ${name}: its size or checksum does not match (a damaged archive)`);
      return out;
    },
  };
}

/** A deflated ZIP archive of these entries, in order. */
export function writeZip(files: ReadonlyArray<{ name: string; data: Buffer | string }>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const f of files) {
    const data = typeof f.data === 'string' ? Buffer.from(f.data, 'utf8') : f.data;
    const comp = zlib.deflateRawSync(data);
    const name = Buffer.from(f.name, 'utf8');
    const crc = crc32(data);
    const loc = Buffer.alloc(30);
    loc.writeUInt32LE(LOC_SIG, 0);
    loc.writeUInt16LE(20, 4); // version needed
    loc.writeUInt16LE(0x0800, 6); // names are UTF-8
    loc.writeUInt16LE(8, 8);
    loc.writeUInt32LE(crc, 14);
    loc.writeUInt32LE(comp.length, 18);
    loc.writeUInt32LE(data.length, 22);
    loc.writeUInt16LE(name.length, 26);
    const cen = Buffer.alloc(46);
    cen.writeUInt32LE(CEN_SIG, 0);
    cen.writeUInt16LE(20, 4);
    cen.writeUInt16LE(20, 6);
    cen.writeUInt16LE(0x0800, 8);
    cen.writeUInt16LE(8, 10);
    cen.writeUInt32LE(crc, 16);
    cen.writeUInt32LE(comp.length, 20);
    cen.writeUInt32LE(data.length, 24);
    cen.writeUInt16LE(name.length, 28);
    cen.writeUInt32LE(offset, 42);
    locals.push(loc, name, comp);
    centrals.push(cen, name);
    offset += loc.length + name.length + comp.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(EOCD_SIG, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}
