// Reading files that may legitimately be absent (a run without config.json, an iteration without samples).
import { promises as fs } from 'node:fs';

/** The file's text, or undefined when it does not exist (other errors throw). */
export async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
