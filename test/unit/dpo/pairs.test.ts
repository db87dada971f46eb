// Preference pairs: both formats (Tinker Studio's prompt/messages + chosen/rejected, the cookbook's
// LabeledComparison), bad lines named by line number with the good ones kept, ties refused.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pairToLine, parsePairsText, readPairsFile, TIE_REASON } from '../../../src/core/dpo/pairs';

const lines = (...xs: unknown[]) => xs.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join('\n');

describe('preference pairs', () => {
  it('reads prompt/messages with string or assistant-message completions, keeping other fields as meta', () => {
    const call = { role: 'assistant', content: '', tool_calls: [{ type: 'function', id: 'c1', function: { name: 'add', arguments: '{"a":2,"b":3}' } }] };
    const { pairs, skipped } = parsePairsText(
      lines(
        { prompt: '2+3=', chosen: '5', rejected: '6', source: { run: 'r1' } },
        { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Add 2 and 3' }], chosen: call, rejected: { role: 'assistant', content: '6' } },
      ),
      'pairs.jsonl',
    );
    assert.deepStrictEqual(skipped, []);
    assert.strictEqual(pairs.length, 2);
    assert.deepStrictEqual(pairs[0], { id: 'pairs.jsonl:1', prompt: [{ role: 'user', content: '2+3=' }], chosen: [{ role: 'assistant', content: '5' }], rejected: [{ role: 'assistant', content: '6' }], meta: { source: { run: 'r1' } } });
    assert.strictEqual(pairs[1]!.prompt.length, 2);
    assert.deepStrictEqual(pairs[1]!.chosen[0]!.tool_calls, call.tool_calls);
    assert.strictEqual(pairs[1]!.meta, undefined);
  });

  it("reads the cookbook's LabeledComparison: label A → A chosen, B → B chosen", () => {
    const comp = (label: string) => ({
      comparison: { prompt_conversation: [{ role: 'user', content: 'hi' }], completion_A: [{ role: 'assistant', content: 'hello' }], completion_B: [{ role: 'assistant', content: 'go away' }] },
      label,
    });
    const { pairs, skipped } = parsePairsText(lines(comp('A'), comp('B')), 'c.jsonl');
    assert.deepStrictEqual(skipped, []);
    assert.strictEqual(pairs[0]!.chosen[0]!.content, 'hello');
    assert.strictEqual(pairs[0]!.rejected[0]!.content, 'go away');
    assert.strictEqual(pairs[1]!.chosen[0]!.content, 'go away');
    assert.strictEqual(pairs[1]!.meta?.label, 'B');
  });

  it('names each bad line by its number and keeps the good ones; a tie is refused with a clear reason', () => {
    const tie = { comparison: { prompt_conversation: [{ role: 'user', content: 'q' }], completion_A: [{ role: 'assistant', content: 'a' }], completion_B: [{ role: 'assistant', content: 'b' }] }, label: 'Tie' };
    const text = lines(
      { prompt: 'ok', chosen: 'a', rejected: 'b' },
      '{not json',
      tie,
      { prompt: 'x', chosen: 'a' },
      '',
      { prompt: 'x', messages: [{ role: 'user', content: 'y' }], chosen: 'a', rejected: 'b' },
      { prompt: 'x', chosen: 'same', rejected: 'same' },
      { prompt: 'x', chosen: { role: 'user', content: 'a' }, rejected: 'b' },
      { messages: [{ role: 'user', content: 'y' }, { role: 'assistant', content: 'z' }], chosen: 'a', rejected: 'b' },
      { comparison: { prompt_conversation: [], completion_A: 'a', completion_B: 'b' }, label: 'A' },
      { comparison: { prompt_conversation: [{ role: 'user', content: 'q' }], completion_A: 'a', completion_B: 'b' }, label: 'C' },
      [1, 2],
      { prompt: 'last', chosen: 'a', rejected: 'b' },
    );
    const { pairs, skipped } = parsePairsText(text, 'p.jsonl');
    assert.deepStrictEqual(pairs.map((p) => p.id), ['p.jsonl:1', 'p.jsonl:13']);
    const by = Object.fromEntries(skipped.map((s) => [s.where, s.reason]));
    assert.deepStrictEqual(Object.keys(by), ['p.jsonl:2', 'p.jsonl:3', 'p.jsonl:4', 'p.jsonl:6', 'p.jsonl:7', 'p.jsonl:8', 'p.jsonl:9', 'p.jsonl:10', 'p.jsonl:11', 'p.jsonl:12']);
    assert.match(by['p.jsonl:2']!, /^invalid JSON/);
    assert.strictEqual(by['p.jsonl:3'], TIE_REASON);
    assert.match(by['p.jsonl:3']!, /Tie.*"A" or "B"/);
    assert.match(by['p.jsonl:4']!, /rejected/);
    assert.match(by['p.jsonl:6']!, /exactly one of "prompt".*"messages"/);
    assert.match(by['p.jsonl:7']!, /the same completion/);
    assert.match(by['p.jsonl:8']!, /chosen: message 0 has role "user"/);
    assert.match(by['p.jsonl:9']!, /ends with an assistant message/);
    assert.match(by['p.jsonl:10']!, /prompt_conversation/);
    assert.match(by['p.jsonl:11']!, /label/);
    assert.strictEqual(by['p.jsonl:12'], 'not a JSON object');
  });

  it('a file: "skip" keeps the good lines, "stop" fails at the first bad line with its number', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pairs-'));
    try {
      const f = path.join(dir, 'p.jsonl');
      fs.writeFileSync(f, lines({ prompt: 'a', chosen: 'x', rejected: 'y' }, { comparison: { prompt_conversation: [{ role: 'user', content: 'q' }], completion_A: 'a', completion_B: 'b' }, label: 'Tie' }));
      const ok = await readPairsFile(f, 'p.jsonl', 'skip');
      assert.strictEqual(ok.pairs.length, 1);
      assert.strictEqual(ok.skipped[0]!.where, 'p.jsonl:2');
      await assert.rejects(readPairsFile(f, 'p.jsonl', 'stop'), /p\.jsonl:2: label "Tie".*on_invalid_line/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes a pair back as a line of its own format that reads the same', () => {
    const src = lines({ prompt: '2+3=', chosen: '5', rejected: '6', source: { run: 'r' } }, { messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'u' }], chosen: [{ role: 'assistant', content: 'a', thinking: 't' }], rejected: 'b' });
    const first = parsePairsText(src, 'f').pairs;
    const again = parsePairsText(first.map(pairToLine).join('\n'), 'f').pairs;
    assert.deepStrictEqual(again, first);
    assert.strictEqual(pairToLine(first[0]!), JSON.stringify({ prompt: '2+3=', chosen: '5', rejected: '6', source: { run: 'r' } }));
  });
});
