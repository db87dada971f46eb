import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { MetricsTail } from '../../../src/core/runs/metricsTail';

function tempFile(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'metrics-tail-')), 'metrics.jsonl');
}

describe('MetricsTail (following a growing metrics.jsonl)', () => {
  it('a missing file reads as no records, and appears later', async () => {
    const file = tempFile();
    const tail = new MetricsTail(file);
    assert.deepStrictEqual(await tail.read(), { records: [], problems: [], reset: false });
    fs.writeFileSync(file, '{"step": 0, "x": 1}\n');
    assert.deepStrictEqual((await tail.read()).records, [{ step: 0, x: 1 }]);
  });

  it('returns only lines completed since the last read; a partial last line waits for its newline', async () => {
    const file = tempFile();
    fs.writeFileSync(file, '{"step": 0, "r": 0.5}\n{"step": 1, "r"');
    const tail = new MetricsTail(file);
    assert.deepStrictEqual((await tail.read()).records, [{ step: 0, r: 0.5 }]);
    assert.deepStrictEqual((await tail.read()).records, [], 'nothing new');
    fs.appendFileSync(file, ': NaN}\n{"step": 2, "r": 1}\n');
    const r = await tail.read();
    assert.deepStrictEqual(r.records.map((x) => x.step), [1, 2]);
    assert.ok(Number.isNaN(r.records[0]!.r), "Python's NaN token is read");
  });

  it('reports a bad line by its number in the file and goes on', async () => {
    const file = tempFile();
    fs.writeFileSync(file, '{"step": 0}\nnot json\n{"nostep": 1}\n{"step": 3}\n');
    const r = await new MetricsTail(file).read();
    assert.deepStrictEqual(r.records.map((x) => x.step), [0, 3]);
    assert.deepStrictEqual(r.problems.map((p) => p.line), [2, 3]);
    assert.ok(r.problems.every((p) => p.file === file));
  });

  it('line numbers keep counting across reads', async () => {
    const file = tempFile();
    fs.writeFileSync(file, '{"step": 0}\n');
    const tail = new MetricsTail(file);
    await tail.read();
    fs.appendFileSync(file, 'oops\n');
    assert.strictEqual((await tail.read()).problems[0]!.line, 2);
  });

  it('a file that shrank (rewritten) is read again from the start, as a reset', async () => {
    const file = tempFile();
    fs.writeFileSync(file, '{"step": 0}\n{"step": 1}\n');
    const tail = new MetricsTail(file);
    await tail.read();
    fs.writeFileSync(file, '{"step": 5}\n');
    const r = await tail.read();
    assert.strictEqual(r.reset, true);
    assert.deepStrictEqual(r.records.map((x) => x.step), [5]);
  });

  it('multi-byte characters split across reads are decoded whole', async () => {
    const file = tempFile();
    const line = Buffer.from('{"step": 0, "note": "KL ↔ ü"}\n', 'utf8');
    const cut = line.indexOf(Buffer.from('↔')) + 1; // inside the 3-byte character
    fs.writeFileSync(file, line.subarray(0, cut));
    const tail = new MetricsTail(file);
    assert.deepStrictEqual((await tail.read()).records, []);
    fs.appendFileSync(file, line.subarray(cut));
    assert.deepStrictEqual((await tail.read()).records, [{ step: 0, note: 'KL ↔ ü' }]);
  });

  it('concurrent reads never return a line twice', async () => {
    const file = tempFile();
    fs.writeFileSync(file, Array.from({ length: 50 }, (_, i) => `{"step": ${i}}`).join('\n') + '\n');
    const tail = new MetricsTail(file);
    const reads = await Promise.all([tail.read(), tail.read(), tail.read()]);
    const steps = reads.flatMap((r) => r.records.map((x) => x.step));
    assert.deepStrictEqual(steps, Array.from({ length: 50 }, (_, i) => i));
  });
});
