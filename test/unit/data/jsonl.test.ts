// JSONL prompt files: every line checked on its own, errors naming file, line and field, and the
// skip/stop policy for bad lines.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readJsonlProblems } from '../../../src/core/data/jsonl';
import { DatasetError, problemToMessages, recordToProblem, renderedPrompt } from '../../../src/core/data/problem';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { getRenderer } from '../../../src/core/render/registry';

const fields = { promptField: 'question', groundTruthField: 'answer' };

describe('JSONL prompt files', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-jsonl-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (text: string) => {
    const file = path.join(dir, 'train.jsonl');
    fs.writeFileSync(file, text);
    return file;
  };

  it('reads questions and ground truths, numbers as their text, with ids "<file>:<line>"', async () => {
    const file = write('{"question": "What is 2 + 2?", "answer": 4}\n\n{"question": "Capital of France?", "answer": "Paris"}\n');
    const { problems, skipped } = await readJsonlProblems(file, 'train.jsonl', fields, 'stop');
    assert.deepStrictEqual(skipped, []);
    assert.deepStrictEqual(problems, [
      { id: 'train.jsonl:1', messages: [{ role: 'user', content: 'What is 2 + 2?' }], groundTruth: '4' },
      { id: 'train.jsonl:3', messages: [{ role: 'user', content: 'Capital of France?' }], groundTruth: 'Paris' },
    ]);
  });

  it('puts the system prompt before the question', async () => {
    const file = write('{"question": "q?", "answer": "a"}\n');
    const { problems } = await readJsonlProblems(file, 'train.jsonl', { ...fields, systemPrompt: 'Answer with a number.' }, 'stop');
    assert.deepStrictEqual(problems[0]!.messages, [
      { role: 'system', content: 'Answer with a number.' },
      { role: 'user', content: 'q?' },
    ]);
  });

  it('takes a chat list from "messages" when the line has no question field, few-shot turns included', async () => {
    const convo = [
      { role: 'user', content: 'What is 4 + 5?' },
      { role: 'assistant', content: '9' },
      { role: 'user', content: 'What is 1 + 2?' },
    ];
    const file = write(JSON.stringify({ messages: convo, answer: 3 }) + '\n');
    const { problems } = await readJsonlProblems(file, 'train.jsonl', { ...fields, systemPrompt: 'Be brief.' }, 'stop');
    assert.deepStrictEqual(problems[0]!.messages, [{ role: 'system', content: 'Be brief.' }, ...convo]);
  });

  it('takes a chat list with reasoning, tool calls and a tool result (with its call id), ending on the result', async () => {
    const convo = [
      { role: 'system', content: 'Tools: add(a, b) - Add two integers.' },
      { role: 'user', content: 'What is 123 + 456?' },
      { role: 'assistant', content: '', thinking: 'Use the tool.', tool_calls: [{ type: 'function', id: 'call_1', function: { name: 'add', arguments: '{"a": 123, "b": 456}' } }] },
      { role: 'tool', content: '579', tool_call_id: 'call_1', name: 'add' },
    ];
    const file = write(JSON.stringify({ messages: convo, answer: 579 }) + '\n');
    const { problems } = await readJsonlProblems(file, 'train.jsonl', fields, 'stop');
    assert.deepStrictEqual(problems[0]!.messages, convo);
    // rendered through the run's renderer: the engine's chatml writes the call and the result in its compact tool format
    const tok = new ByteTokenizer();
    const chatml = getRenderer('chatml', tok);
    assert.strictEqual(
      tok.decode(renderedPrompt(chatml, problems[0]!)),
      '<|im_start|>system\nTools: add(a, b) - Add two integers.<|im_end|>\n<|im_start|>user\nWhat is 123 + 456?<|im_end|>\n' +
        '<|im_start|>assistant\n<tool_call>{"name": "add", "arguments": {"a": 123, "b": 456}}</tool_call><|im_end|>\n<|im_start|>tool\n579<|im_end|>\n<|im_start|>assistant\n',
    );
    // a renderer without tool calling refuses it, naming the problem
    assert.throws(
      () => renderedPrompt(getRenderer('role_colon', tok), problems[0]!),
      (err: Error) => err instanceof DatasetError && err.message.startsWith('problem train.jsonl:1: ') && /cannot render reasoning|no tool calling/.test(err.message),
    );
  });

  it('tolerates a BOM, CRLF line ends and a last line without a newline', async () => {
    const file = write('\ufeff{"question": "a", "answer": 1}\r\n{"question": "b", "answer": 2}');
    const { problems } = await readJsonlProblems(file, 'train.jsonl', fields, 'stop');
    assert.deepStrictEqual(
      problems.map((p) => [p.id, p.groundTruth]),
      [
        ['train.jsonl:1', '1'],
        ['train.jsonl:2', '2'],
      ],
    );
  });

  describe('a bad line', () => {
    const bad: Array<[string, string, string]> = [
      ['not JSON', 'not json', 'train.jsonl:2: invalid JSON: '],
      ['not an object', '[1, 2]', 'train.jsonl:2: expected a JSON object, got a list'],
      ['no question', '{"answer": 1}', 'train.jsonl:2: missing field "question" (or a "messages" chat list)'],
      ['an empty question', '{"question": "  ", "answer": 1}', 'train.jsonl:2: field "question" is empty'],
      ['a question that is a number', '{"question": 7, "answer": 1}', 'train.jsonl:2: field "question" must be a string or a chat list [{role, content}, …], not a number'],
      ['no ground truth', '{"question": "q"}', 'train.jsonl:2: missing field "answer"'],
      ['a ground truth that is an object', '{"question": "q", "answer": {"x": 1}}', 'train.jsonl:2: field "answer" must be a string or a number, not an object'],
      ['a ground truth that is null', '{"question": "q", "answer": null}', 'train.jsonl:2: field "answer" must be a string or a number, not null'],
      ['a chat list with an unknown role', '{"messages": [{"role": "robot", "content": "hi"}], "answer": 1}', 'train.jsonl:2: field "messages"[0].role: must be one of "system", "user", "assistant", "tool"'],
      ['a chat list without content', '{"messages": [{"role": "user"}], "answer": 1}', 'train.jsonl:2: field "messages"[0].content: is required'],
      ['a chat list ending with the assistant', '{"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], "answer": 1}', 'train.jsonl:2: field "messages": must end with a user message or a tool result (the model answers it)'],
      ['an empty chat list', '{"messages": [], "answer": 1}', 'train.jsonl:2: field "messages": must not be empty'],
      ['a tool call whose arguments are not a JSON text', '{"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "add", "arguments": {"a": 1}}}]}, {"role": "tool", "content": "1"}], "answer": 1}', 'train.jsonl:2: field "messages"[1].tool_calls[0].function.arguments: '],
      ['an image content part', '{"messages": [{"role": "user", "content": [{"type": "image", "image": "x.png"}]}], "answer": 1}', 'train.jsonl:2: field "messages"[0].content: content parts other than text'],
    ];
    for (const [what, line, message] of bad) {
      it(`${what}: stops the load with "${message}…"`, async () => {
        const file = write(`{"question": "ok", "answer": 1}\n${line}\n{"question": "ok", "answer": 2}\n`);
        await assert.rejects(readJsonlProblems(file, 'train.jsonl', fields, 'stop'), (err: Error) => {
          assert.ok(err instanceof DatasetError);
          assert.ok(err.message.startsWith(message), err.message);
          assert.ok(err.message.endsWith('(set dataset.on_invalid_line to "skip" to leave such lines out)'), err.message);
          return true;
        });
      });
    }

    it('is left out under "skip", and reported with its line and reason', async () => {
      const file = write('{"question": "a", "answer": 1}\n{"question": "b"}\nnot json\n{"question": "c", "answer": 3}\n');
      const { problems, skipped } = await readJsonlProblems(file, 'train.jsonl', fields, 'skip');
      assert.deepStrictEqual(
        problems.map((p) => p.id),
        ['train.jsonl:1', 'train.jsonl:4'],
      );
      assert.deepStrictEqual(
        skipped.map((s) => s.where),
        ['train.jsonl:2', 'train.jsonl:3'],
      );
      assert.strictEqual(skipped[0]!.reason, 'missing field "answer"');
      assert.match(skipped[1]!.reason, /^invalid JSON: /);
    });

    it('at the end without a newline is reported as cut off', async () => {
      const file = write('{"question": "a", "answer": 1}\n{"question": "b", "ans');
      await assert.rejects(readJsonlProblems(file, 'train.jsonl', fields, 'stop'), (err: Error) =>
        err.message.startsWith('train.jsonl:2: the last line is cut off (no newline at the end, and not complete JSON: '),
      );
      const { problems, skipped } = await readJsonlProblems(file, 'train.jsonl', fields, 'skip');
      assert.strictEqual(problems.length, 1);
      assert.strictEqual(skipped[0]!.where, 'train.jsonl:2');
    });
  });

  it('reads the fields the spec names', async () => {
    const file = write('{"problem": "p", "solution": "s"}\n');
    const { problems } = await readJsonlProblems(file, 'train.jsonl', { promptField: 'problem', groundTruthField: 'solution' }, 'stop');
    assert.deepStrictEqual(problems[0]!.messages, [{ role: 'user', content: 'p' }]);
    assert.strictEqual(problems[0]!.groundTruth, 's');
  });

  it('says which file it cannot read', async () => {
    await assert.rejects(readJsonlProblems(path.join(dir, 'absent.jsonl'), 'absent.jsonl', fields, 'stop'), {
      message: 'absent.jsonl: cannot read the dataset file (ENOENT)',
    });
  });

  describe('problemToMessages', () => {
    it('is the user question alone without a system prompt', () => {
      assert.deepStrictEqual(problemToMessages('q'), [{ role: 'user', content: 'q' }]);
    });
    it('keeps the own system message of a conversation', () => {
      const convo = [
        { role: 'system' as const, content: 'own' },
        { role: 'user' as const, content: 'q' },
      ];
      assert.deepStrictEqual(problemToMessages(convo, 'spec'), convo);
    });
    it('does not share message objects with its input', () => {
      const convo = [{ role: 'user' as const, content: 'q' }];
      const out = problemToMessages(convo);
      out[0]!.content = 'changed';
      assert.strictEqual(convo[0]!.content, 'q');
    });
  });

  it('a record checked on its own names its problem without throwing', () => {
    assert.deepStrictEqual(recordToProblem('text', fields, 'x:1'), { ok: false, reason: 'expected a JSON object, got string' });
    assert.deepStrictEqual(recordToProblem({ question: 'q', answer: 1.5 }, fields, 'x:1'), {
      ok: true,
      problem: { id: 'x:1', messages: [{ role: 'user', content: 'q' }], groundTruth: '1.5' },
    });
  });
});
