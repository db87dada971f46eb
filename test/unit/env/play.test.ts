// Playing an environment by hand (Play as the Model) and validating an env file as the editor does:
// real Python and Node workers, the chatml renderer on the engine's byte tokenizer, the example
// examples/arith-retry as written.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { getRenderer } from '../../../src/core/render/registry';
import { createEnvRunner, type EnvRunner } from '../../../src/core/env/runner';
import { datasetLine, envLimitsOf, playEpisode, typedProblem, typedReplyTokens, TypedReplies } from '../../../src/core/env/play';
import { classAnchor, methodAnchor, validateEnv } from '../../../src/core/env/validate';
import { EnvSpec } from '../../../src/core/grpo/spec';
import { looksLikeEnv } from '../../../src/core/env/files';
import type { EnvPlayView } from '../../../src/protocol/envPlayProtocol';
import { formatStepReward, stopText } from '../../../src/protocol/envPlayProtocol';
import { removeTempDirs, rewardFile, waitFor } from '../reward/fixtures';

const root = path.resolve(__dirname, '../../../..');
const ARITH_RETRY = path.join(root, 'examples/arith-retry/arith_retry.env.py');
const renderer = getRenderer('chatml', new ByteTokenizer());
const PARAMS = { max_tokens: 16, temperature: 1 };

describe('env: playing by hand and validating env files', function () {
  this.timeout(60_000);
  after(removeTempDirs);

  it('a typed reply is parsed by the renderer as a sample would be: text, and a tool call in its format', () => {
    const plain = renderer.parseResponse(typedReplyTokens(renderer, '75'));
    assert.strictEqual(plain.termination, 'stop_sequence');
    assert.deepStrictEqual({ role: plain.message.role, content: plain.message.content }, { role: 'assistant', content: '75' });
    const call = renderer.parseResponse(typedReplyTokens(renderer, '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>'));
    assert.strictEqual(call.message.tool_calls?.[0]?.function.name, 'add');
    assert.deepStrictEqual(JSON.parse(call.message.tool_calls![0]!.function.arguments), { a: 1, b: 2 });
    const bad = renderer.parseResponse(typedReplyTokens(renderer, '<tool_call>{"name": "add", </tool_call>'));
    assert.ok(bad.message.unparsed_tool_calls?.length, 'a malformed call is an unparsed call');
  });

  it('a *.env.* file is taken for an environment when it mentions initial_observation', () => {
    assert.ok(looksLikeEnv('class A:\n    def initial_observation(self): ...'));
    assert.ok(looksLikeEnv('export class A { initialObservation() {} }'));
    assert.ok(!looksLikeEnv('export default { apiUrl: process.env.API_URL };'));
  });

  it('typed problems and dataset lines', () => {
    assert.deepStrictEqual(typedProblem('{"x": 1}'), { x: 1 });
    assert.strictEqual(typedProblem('What is 2 + 2?'), 'What is 2 + 2?');
    assert.deepStrictEqual(datasetLine('{"x":1}\n{"x":2}\n', 2, 'train.jsonl'), { x: 2 });
    assert.throws(() => datasetLine('{"x":1}\n', 3, 'train.jsonl'), /train\.jsonl has no line 3 \(it has 1 lines\)/);
    assert.throws(() => datasetLine('{"x":1}\nnot json\n', 2, 'train.jsonl'), /train\.jsonl:2 is not JSON/);
    assert.strictEqual(formatStepReward(0.5), '+0.5');
    assert.strictEqual(formatStepReward(-1), '−1');
    assert.strictEqual(formatStepReward(0), '0');
    assert.match(stopText('max_turns'), /max_turns/);
  });

  it('envLimitsOf takes the spec env\'s limits and the run\'s max_tokens', () => {
    const env = EnvSpec.parse({ file: 'a.env.py', max_turns: 2, max_trajectory_tokens: 100 });
    assert.deepStrictEqual(envLimitsOf(env, 6), { maxTurns: 2, maxTokens: 6, maxTrajectoryTokens: 100, failedParseReward: -1, terminateOnParseError: true, contextOverflowReward: -0.1 });
  });

  describe('Play as the Model on examples/arith-retry', () => {
    let env: EnvRunner;
    before(async () => {
      env = await createEnvRunner({ file: ARITH_RETRY, workers: 1 });
    });
    after(() => env.close());

    async function play(replies: string[]): Promise<{ views: EnvPlayView[]; result: Awaited<ReturnType<typeof playEpisode>> }> {
      const views: EnvPlayView[] = [];
      const policy = new TypedReplies(renderer);
      const done = playEpisode({
        env,
        problem: { x: 24, y: 51 },
        renderer,
        policy,
        params: PARAMS,
        limits: envLimitsOf(EnvSpec.parse({ file: 'a.env.py', max_turns: 2 }), 16),
        onUpdate: (v) => views.push(v),
        view: { id: 't', player: 'you', envFile: ARITH_RETRY, className: env.className, renderer: renderer.name, problem: '{"x":24,"y":51}' },
      });
      for (const r of replies) {
        await waitFor(() => policy.awaiting, 'the episode to await a reply');
        policy.reply(r);
      }
      return { views, result: await done };
    }

    it('a wrong reply gets "Wrong, try again.", a right one ends the episode with the env\'s reward', async () => {
      const { views, result } = await play(['70', '75']);
      const first = views.find((v) => v.status === 'awaiting')!;
      assert.deepStrictEqual(first.pending?.messages, [{ role: 'user', content: 'What is 24 + 51?' }]);
      const second = views.filter((v) => v.status === 'awaiting')[1]!;
      assert.deepStrictEqual(second.pending?.messages, [{ role: 'user', content: 'Wrong, try again.' }]);
      assert.strictEqual(second.turns.length, 1);
      assert.strictEqual(second.turns[0]!.reply.content, '70');
      const end = result.view;
      assert.strictEqual(end.status, 'done');
      assert.strictEqual(end.stop, 'completed');
      assert.deepStrictEqual(end.turns.map((t) => t.reward), [0, 0.5]);
      assert.strictEqual(end.total, 0.5);
      assert.deepStrictEqual(end.turns[1]!.metrics, { first_try_correct: 0, second_try_correct: 1 });
      assert.strictEqual(views.at(-1)!.status, 'done');
    });

    it('a right first reply scores 1; two wrong ones end the episode with 0', async () => {
      assert.deepStrictEqual((await play(['75'])).result.view.turns.map((t) => t.reward), [1]);
      const wrong = (await play(['1', '2'])).result.view;
      assert.deepStrictEqual(wrong.turns.map((t) => [t.reward, t.episode_done]), [[0, false], [0, true]]);
      assert.strictEqual(wrong.total, 0);
    });

    it('stopping while the env awaits a reply cancels the episode', async () => {
      const views: EnvPlayView[] = [];
      const policy = new TypedReplies(renderer);
      const controller = new AbortController();
      const done = playEpisode({
        env, problem: { x: 1, y: 2 }, renderer, policy, params: PARAMS, limits: envLimitsOf(EnvSpec.parse({ file: 'a.env.py' }), 16), signal: controller.signal,
        onUpdate: (v) => views.push(v),
        view: { id: 'c', player: 'you', envFile: ARITH_RETRY, className: env.className, renderer: renderer.name, problem: '{}' },
      });
      await waitFor(() => policy.awaiting, 'the episode to await a reply');
      controller.abort(new Error('stopped'));
      await assert.rejects(done, /stopped/);
      assert.strictEqual(views.at(-1)!.status, 'cancelled');
    });
  });

  describe('validateEnv', () => {
    const problems = [{ problem: { x: 1, y: 2 }, source: 'train.jsonl:1' }, { problem: { x: 3, y: 4 }, source: 'train.jsonl:2' }];

    it('examples/arith-retry validates clean on its dataset lines, two turns each', async () => {
      const source = fs.readFileSync(ARITH_RETRY, 'utf8');
      const v = await validateEnv({ file: ARITH_RETRY, source, problems, maxTurns: 2 });
      assert.deepStrictEqual(v.diagnostics, []);
      assert.strictEqual(v.className, 'ArithRetry');
      assert.deepStrictEqual(v.episodes.map((e) => [e.ok, e.turns, e.done]), [[true, 2, true], [true, 2, true]]);
    });

    it('a missing step method is a load error on the class name', async () => {
      const source = 'class Env:\n    def __init__(self, problem):\n        pass\n    def initial_observation(self):\n        return []\n';
      const v = await validateEnv({ file: rewardFile('nostep.env.py', source), source, problems });
      assert.strictEqual(v.loaded, false);
      const d = v.diagnostics[0]!;
      assert.strictEqual(d.code, 'missing-function');
      assert.match(d.message, /no environment class/);
      assert.deepStrictEqual([d.line, d.column, d.endColumn], [1, 7, 10]);
    });

    it('wrong return shapes are errors on the method, naming the field and the dataset lines', async () => {
      const source = [
        'class Env:',
        '    def __init__(self, problem):',
        '        self.p = problem',
        '    def initial_observation(self):',
        '        return [{"role": "user", "content": "hi"}]',
        '    def step(self, message):',
        '        return {"reward": "high", "episode_done": True}',
        '',
      ].join('\n');
      const v = await validateEnv({ file: rewardFile('shape.env.py', source), source, problems });
      assert.strictEqual(v.diagnostics.length, 1);
      const d = v.diagnostics[0]!;
      assert.strictEqual(d.code, 'wrong-shape');
      assert.match(d.message, /Env\.step returned a value of the wrong shape \(at reward\)/);
      assert.match(d.message, /on 2 of 2 dataset lines, first train\.jsonl:1/);
      assert.deepStrictEqual([d.line, d.column], [6, 9]);
    });

    it('an empty initial observation, and an exception in step at its line (TypeScript)', async () => {
      const py = 'class Env:\n    def __init__(self, p):\n        pass\n    def initial_observation(self):\n        return []\n    def step(self, m):\n        return {"reward": 0, "episode_done": True}\n';
      const v = await validateEnv({ file: rewardFile('empty.env.py', py), source: py, problems: problems.slice(0, 1) });
      assert.match(v.diagnostics[0]!.message, /initial_observation returned a value of the wrong shape.*the conversation is empty/);
      assert.strictEqual(v.diagnostics[0]!.line, 4);
      const ts = [
        'export class Env {',
        '  p: { x: number };',
        '  constructor(p: { x: number }) { this.p = p; }',
        '  initialObservation() { return [{ role: "user", content: "q" }]; }',
        '  step(m: { content: string }) {',
        '    throw new Error("boom " + this.p.x);',
        '  }',
        '}',
        '',
      ].join('\n');
      const t = await validateEnv({ file: rewardFile('boom.env.ts', ts), source: ts, problems: problems.slice(0, 1) });
      const d = t.diagnostics[0]!;
      assert.strictEqual(d.code, 'exception');
      assert.match(d.message, /step raised: .*boom 1/);
      assert.strictEqual(d.line, 6);
    });

    it('static checks name environments; no dataset line is said', async () => {
      const source = 'import socket\nclass Env:\n    def __init__(self, p):\n        pass\n    def initial_observation(self):\n        return [{"role": "user", "content": "q"}]\n    def step(self, m):\n        return {"reward": 0, "episode_done": True}\n';
      const v = await validateEnv({ file: rewardFile('net.env.py', source), source, problems: [] });
      assert.deepStrictEqual(v.diagnostics.map((d) => d.code), ['network', 'examples-file']);
      assert.match(v.diagnostics[0]!.message, /environments must run offline/);
      assert.strictEqual(v.diagnostics[1]!.severity, 'information');
    });

    it('anchors: a method\'s name, else the class', () => {
      const py = 'class A:\n    async def step(self, m):\n        pass\n';
      assert.deepStrictEqual(methodAnchor(py, 'python', 'step'), { line: 2, column: 15, endLine: 2, endColumn: 19 });
      assert.deepStrictEqual(methodAnchor(py, 'python', 'initial_observation'), { line: 1, column: 7, endLine: 1, endColumn: 8 });
      assert.deepStrictEqual(classAnchor('export default class Game {}', 'javascript'), { line: 1, column: 22, endLine: 1, endColumn: 26 });
    });
  });
});
