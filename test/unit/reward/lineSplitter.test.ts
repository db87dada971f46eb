// The worker answer channel's line splitting: whole lines across chunk boundaries (also inside a
// multi-byte character), and a line over the cap reported once, without being held in memory.
import * as assert from 'assert';
import { lineSplitter } from '../../../src/core/reward/workerProcess';

function feed(chunks: Buffer[], maxBytes: number): Array<string | number> {
  const seen: Array<string | number> = [];
  const split = lineSplitter((l) => seen.push(l), (o) => seen.push(o.bytes), maxBytes);
  for (const c of chunks) split(c);
  return seen;
}

describe('reward worker line splitter', () => {
  it('joins lines split across chunks, inside a multi-byte character too', () => {
    const bytes = Buffer.from('{"a":"é"}\n{"b":1}\n\n{"c"', 'utf8');
    const chunks = Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));
    assert.deepStrictEqual(feed(chunks, 100), ['{"a":"é"}', '{"b":1}']);
  });

  it('reports a line over the cap once, as soon as it passes the cap, and goes on with the next line', () => {
    const seen = feed([Buffer.from('ok\n12345'), Buffer.from('6789'), Buffer.from('abcdef'), Buffer.from('ghi\nnext\n')], 8);
    assert.deepStrictEqual(seen, ['ok', 9, 'next']);
    assert.deepStrictEqual(feed([Buffer.from('x'.repeat(20) + '\nafter\n')], 8), [20, 'after']);
  });
});
