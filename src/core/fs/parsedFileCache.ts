// Files parsed once and kept by path: a file is read again only when its size, modification time or
// inode (an atomic rename replaces it) changed. For views that refresh often over files that rarely
// change (a run's config.json behind the spec CodeLens).
import { promises as fs } from 'node:fs';

interface Entry<T> {
  mtimeMs: number;
  size: number;
  ino: number;
  value: T;
}

export class ParsedFileCache<T> {
  private readonly entries = new Map<string, Entry<T>>();

  /** `parse` turns the file's text into the value kept (it should not throw: return what a bad file means). */
  constructor(
    private readonly parse: (text: string, file: string) => T,
    private readonly readFile: (file: string) => Promise<string> = (file) => fs.readFile(file, 'utf8'),
  ) {}

  /** The parsed file, or undefined when it does not exist (or cannot be read). */
  async get(file: string): Promise<T | undefined> {
    let st;
    try {
      st = await fs.stat(file);
    } catch {
      this.entries.delete(file);
      return undefined;
    }
    const hit = this.entries.get(file);
    if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size && hit.ino === st.ino) return hit.value;
    let text: string;
    try {
      text = await this.readFile(file);
    } catch {
      this.entries.delete(file);
      return undefined;
    }
    const value = this.parse(text, file);
    this.entries.set(file, { mtimeMs: st.mtimeMs, size: st.size, ino: st.ino, value });
    return value;
  }

  /** Forgets the files `keep` does not accept (e.g. run directories no longer listed). */
  prune(keep: (file: string) => boolean): void {
    for (const file of this.entries.keys()) if (!keep(file)) this.entries.delete(file);
  }
}
