import * as assert from 'assert';
import { parseJsonl, parseJsonLine, stringifyJsonLine } from '../../../src/core/runs/jsonl';

describe('JSON lines', () => {
  it("reads Python's NaN and Infinity tokens", () => {
    const v = parseJsonLine('{"step": 3, "a": NaN, "b": Infinity, "c": -Infinity, "d": [1, NaN], "s": "NaN, as text"}') as Record<string, unknown>;
    assert.ok(Number.isNaN(v.a));
    assert.strictEqual(v.b, Infinity);
    assert.strictEqual(v.c, -Infinity);
    assert.ok(Number.isNaN((v.d as number[])[1]));
    assert.strictEqual(v.s, 'NaN, as text');
  });

  it('writes non-finite numbers as Python does, and reads back what it writes', () => {
    const line = stringifyJsonLine({ step: 1, nll: NaN, big: Infinity, small: -Infinity, ok: 0.5 });
    assert.strictEqual(line, '{"step":1,"nll":NaN,"big":Infinity,"small":-Infinity,"ok":0.5}');
    const back = parseJsonLine(line) as Record<string, number>;
    assert.ok(Number.isNaN(back.nll));
    assert.strictEqual(back.big, Infinity);
    assert.strictEqual(back.ok, 0.5);
  });

  it('leaves out a trailing line still being written and reports bad lines by number', () => {
    const read = parseJsonl('{"step": 0}\n\nnot json\n{"step": 2}\n{"step": 3, "x"', 'm.jsonl');
    assert.deepStrictEqual(
      read.records.map((r) => r.line),
      [1, 4],
    );
    assert.strictEqual(read.partialTail, true);
    assert.strictEqual(read.problems.length, 1);
    assert.strictEqual(read.problems[0]!.line, 3);
    assert.strictEqual(read.problems[0]!.file, 'm.jsonl');
  });

  it('an empty file has no records and no partial tail', () => {
    assert.deepStrictEqual(parseJsonl('', 'e.jsonl'), { records: [], problems: [], partialTail: false });
  });
});
