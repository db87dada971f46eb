// Follows a metrics.jsonl while a run appends to it: each read() returns the records of the lines
// completed since the previous read. A trailing line without "\n" is left for a later read; a file
// that shrank (rewritten or replaced) is read again from the start and reported as a reset.
import { promises as fs } from 'node:fs';
import type { JsonlProblem } from './jsonl';
import { MetricsRecord, parseRecords } from './runDirectory';

export interface MetricsTailRead {
  records: MetricsRecord[];
  problems: JsonlProblem[];
  /** true when the file was read from its start again: earlier records are no longer valid */
  reset: boolean;
}

const NEWLINE = 0x0a;

export class MetricsTail {
  /** byte offset just after the last complete line consumed */
  private offset = 0;
  /** 1-based number of the last complete line consumed */
  private line = 0;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(readonly file: string) {}

  /** New complete lines since the last read. Concurrent calls are serialised. */
  read(): Promise<MetricsTailRead> {
    const next = this.chain.then(() => this.readOnce());
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async readOnce(): Promise<MetricsTailRead> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      const reset = this.offset > 0;
      this.offset = 0;
      this.line = 0;
      return { records: [], problems: [], reset };
    }
    try {
      const { size } = await handle.stat();
      let reset = false;
      if (size < this.offset) {
        this.offset = 0;
        this.line = 0;
        reset = true;
      }
      if (size === this.offset) return { records: [], problems: [], reset };
      const buf = Buffer.alloc(size - this.offset);
      const { bytesRead } = await handle.read(buf, 0, buf.length, this.offset);
      const end = buf.subarray(0, bytesRead).lastIndexOf(NEWLINE);
      if (end < 0) return { records: [], problems: [], reset };
      const text = buf.subarray(0, end + 1).toString('utf8');
      this.offset += end + 1;
      const { records, problems } = parseRecords(text, this.file, MetricsRecord);
      for (const p of problems) p.line += this.line;
      this.line += text.split('\n').length - 1;
      return { records, problems, reset };
    } finally {
      await handle.close();
    }
  }
}
