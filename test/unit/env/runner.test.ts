// Environment files in real Python and real Node workers: episodes step by step, instance
// stickiness, compute_group_rewards, and the fault suite (hostile, hanging, wrong shapes), as the
// reward runners' (test/unit/reward).
import * as assert from 'assert';
import { createEnvRunner, type EnvRunner } from '../../../src/core/env/runner';
import { RewardLoadError } from '../../../src/core/reward/errors';
import { isAlive, removeTempDirs, rewardFile } from '../reward/fixtures';

const PY_ENV = `
import os
class Retry:
    def __init__(self, problem):
        self.problem = problem
        self.tries = 0
        self.pid = os.getpid()
    def initial_observation(self):
        return [{"role": "user", "content": "What is %d + %d?" % (self.problem["x"], self.problem["y"])}]
    def step(self, message):
        self.tries += 1
        right = message["content"].strip() == str(self.problem["x"] + self.problem["y"])
        if right or self.tries == 2:
            return {"reward": (1.0 if self.tries == 1 else 0.5) if right else 0.0, "episode_done": True, "metrics": {"tries": self.tries, "pid": self.pid}}
        return {"reward": 0.0, "episode_done": False, "metrics": {"pid": self.pid},
                "next_messages": [{"role": "user", "content": "What is?"}, message, {"role": "user", "content": "Wrong, try again."}]}

def compute_group_rewards(problems, transcripts):
    return [(0.25 * len(t), {"judged": 1}) for t in transcripts]
`;

const JS_ENV = `
export class Retry {
  constructor(problem) { this.problem = problem; this.tries = 0; }
  async initialObservation() { return { messages: [{ role: 'user', content: 'What is ' + this.problem.x + ' + ' + this.problem.y + '?' }], tools: [{ name: 'add', description: 'Add two integers.', parameters: { type: 'object', properties: { a: {}, b: {} } } }] }; }
  step(message) {
    this.tries++;
    const right = message.content.trim() === String(this.problem.x + this.problem.y);
    if (right || this.tries === 2) return { reward: right ? (this.tries === 1 ? 1 : 0.5) : 0, episodeDone: true, metrics: { tries: this.tries, first_try_correct: right && this.tries === 1 } };
    return { reward: 0, episodeDone: false, nextMessages: [{ role: 'user', content: 'x' }, message, { role: 'user', content: 'Wrong, try again.' }] };
  }
}
export function computeGroupRewards(problems, transcripts) { return transcripts.map((t) => ({ reward: t.length, metrics: {} })); }
`;

const reply = (content: string) => ({ role: 'assistant' as const, content });

describe('env: environment files (runner)', function () {
  this.timeout(120_000);
  const runners: EnvRunner[] = [];
  const open = async (name: string, source: string, opts: { className?: string; timeoutMs?: number; workers?: number } = {}) => {
    const r = await createEnvRunner({ file: rewardFile(name, source), workers: opts.workers ?? 2, timeoutMs: opts.timeoutMs ?? 10_000, ...(opts.className ? { className: opts.className } : {}) });
    runners.push(r);
    return r;
  };
  after(async () => {
    await Promise.all(runners.map((r) => r.close()));
    removeTempDirs();
  });

  it('Python: plays an episode through two turns, with metrics; each instance stays on one worker', async () => {
    const env = await open('retry.env.py', PY_ENV);
    assert.strictEqual(env.className, 'Retry');
    assert.strictEqual(env.hasGroupRewards, true);
    const eps = Array.from({ length: 6 }, (_, i) => env.episode({ x: i, y: 1 }));
    const starts = await Promise.all(eps.map((e) => e.start()));
    assert.ok(starts.every((s) => s.ok));
    assert.deepStrictEqual(starts[2], { ok: true, value: { messages: [{ role: 'user', content: 'What is 2 + 1?' }] } });
    const first = await Promise.all(eps.map((e, i) => e.step(reply(i % 2 ? String(i + 1) : 'no'))));
    const second = await Promise.all(eps.map((e, i) => (i % 2 ? undefined : e.step(reply(String(i + 1))))));
    for (let i = 0; i < 6; i++) {
      const a = first[i]!;
      assert.ok(a.ok);
      if (i % 2) {
        assert.deepStrictEqual([a.value.reward, a.value.episode_done, a.value.metrics?.tries], [1, true, 1]);
      } else {
        assert.strictEqual(a.value.episode_done, false);
        assert.strictEqual(a.value.next_messages?.at(-1)?.content, 'Wrong, try again.');
        const b = second[i]!;
        assert.ok(b.ok);
        assert.deepStrictEqual([b.value.reward, b.value.metrics?.tries], [0.5, 2]);
        // the same instance (its own state, tries = 2) on the same worker from first to last step
        assert.strictEqual(b.value.metrics?.pid, a.value.metrics?.pid);
      }
    }
    const pids = new Set(first.map((a) => (a.ok ? a.value.metrics?.pid : 0)));
    assert.strictEqual(pids.size, 2, 'the episodes are spread over both workers');
    await Promise.all(eps.map((e) => e.close()));
    const g = await env.groupRewards([{}, {}], [[reply('a')], [reply('a'), reply('b')]]);
    assert.deepStrictEqual(g, { ok: true, value: [{ reward: 0.25, metrics: { judged: 1 } }, { reward: 0.5, metrics: { judged: 1 } }] });
  });

  it('TypeScript/ESM: camelCase methods and results, tools from the initial observation, booleans as 1/0', async () => {
    const env = await open('retry.env.mjs', JS_ENV);
    assert.strictEqual(env.className, 'Retry');
    const ep = env.episode({ x: 2, y: 3 });
    const s = await ep.start();
    assert.ok(s.ok);
    assert.strictEqual(s.value.tools?.[0]?.name, 'add');
    const a = await ep.step(reply('5'));
    assert.deepStrictEqual(a, { ok: true, value: { reward: 1, episode_done: true, metrics: { tries: 1, first_try_correct: 1 } } });
    assert.deepStrictEqual(await env.groupRewards([{}], [[reply('a'), reply('b')]]), { ok: true, value: [{ reward: 2, metrics: {} }] });
    const ts = await open('retry.env.ts', JS_ENV.replace('constructor(problem)', 'constructor(problem: { x: number; y: number })').replace('class Retry {', 'class Retry {\n  problem: { x: number; y: number }; tries: number;'));
    const e2 = ts.episode({ x: 1, y: 1 });
    assert.ok((await e2.start()).ok);
    assert.deepStrictEqual(await e2.step(reply('2')), { ok: true, value: { reward: 1, episode_done: true, metrics: { tries: 1, first_try_correct: 1 } } });
  });

  it('an exception in step fails that episode with its traceback and line; the worker and the others go on', async () => {
    const env = await open('boom.env.py', `
class Boom:
    def __init__(self, problem):
        self.problem = problem
    def initial_observation(self):
        return [{"role": "user", "content": "hi"}]
    def step(self, message):
        if message["content"] == "boom":
            raise ValueError("no such move")
        return {"reward": 1, "episode_done": True}
`);
    const [a, b] = [env.episode({}), env.episode({})];
    await Promise.all([a.start(), b.start()]);
    const ra = await a.step(reply('boom'));
    assert.ok(!ra.ok);
    assert.strictEqual(ra.error.kind, 'exception');
    assert.match(ra.error.message, /ValueError: no such move/);
    assert.strictEqual(ra.error.line, 9);
    assert.match(ra.error.traceback ?? '', /raise ValueError/);
    assert.deepStrictEqual(await b.step(reply('ok')), { ok: true, value: { reward: 1, episode_done: true } });
  });

  it('a constructor that raises fails the episode at start', async () => {
    const env = await open('ctor.env.js', `exports.E = class E { constructor(p) { throw new TypeError('bad line ' + p.n); } initialObservation() { return []; } step() { return 1; } };`);
    const r = await env.episode({ n: 3 }).start();
    assert.ok(!r.ok);
    assert.strictEqual(r.error.kind, 'exception');
    assert.match(r.error.message, /TypeError: bad line 3/);
    assert.strictEqual(r.error.line, 1);
  });

  it('wrong shapes are invalid results naming what is wrong, with the raw value', async () => {
    const env = await open('shapes.env.py', `
import math
class Shapes:
    def __init__(self, problem):
        self.kind = problem["kind"]
    def initial_observation(self):
        if self.kind == "noinit":
            return "hello"
        return [{"role": "user", "content": "hi"}]
    def step(self, message):
        k = self.kind
        if k == "number": return 1.0
        if k == "nan": return {"reward": math.nan, "episode_done": True}
        if k == "object": return {"reward": object(), "episode_done": True}
        if k == "nomsgs": return {"reward": 0, "episode_done": False}
        if k == "extra": return {"reward": 0, "episode_done": True, "bonus": 1}
        if k == "badmetric": return {"reward": 0, "episode_done": True, "metrics": {"m": "high"}}
        if k == "badrole": return {"reward": 0, "episode_done": False, "next_messages": [{"role": "narrator", "content": "x"}]}
def compute_group_rewards(problems, transcripts):
    return [1.0]
`);
    const outcome = async (kind: string) => {
      const e = env.episode({ kind });
      const s = await e.start();
      if (!s.ok) return s.error;
      const r = await e.step(reply('x'));
      assert.ok(!r.ok, `${kind} should fail`);
      return r.error;
    };
    const noinit = await outcome('noinit');
    assert.strictEqual(noinit.kind, 'invalid_result');
    assert.match(noinit.message, /Shapes\.initial_observation returned a value of the wrong shape/);
    assert.match((await outcome('number')).message, /Shapes\.step returned a value of the wrong shape/);
    const nan = await outcome('nan');
    assert.strictEqual(nan.kind, 'invalid_result');
    assert.match(nan.message, /not JSON data/);
    assert.match((await outcome('object')).raw ?? '', /<object object/);
    assert.match((await outcome('nomsgs')).message, /next_messages is required while the episode goes on/);
    assert.match((await outcome('extra')).message, /bonus/);
    assert.match((await outcome('badmetric')).message, /at metrics\.m/);
    assert.match((await outcome('badrole')).message, /at next_messages\.0\.role/);
    const g = await env.groupRewards([{}, {}], [[], []]);
    assert.ok(!g.ok);
    assert.match(g.error.message, /returned 1 rewards for 2 episodes/);
  });

  it('a step that hangs times out, its worker is replaced; the episodes it hosted lose their state; new episodes run', async () => {
    const env = await open('hang.env.py', `
import threading
class Hang:
    def __init__(self, problem):
        self.problem = problem
    def initial_observation(self):
        return [{"role": "user", "content": "hi"}]
    def step(self, message):
        if message["content"] == "hang":
            threading.Event().wait()
        return {"reward": 1, "episode_done": True}
`, { workers: 1, timeoutMs: 1500 });
    const [a, b] = [env.episode({}), env.episode({})];
    await Promise.all([a.start(), b.start()]);
    const [pid] = env.pids();
    const [ra, rb] = await Promise.all([a.step(reply('hang')), b.step(reply('fine'))]);
    assert.ok(!ra.ok && ra.error.kind === 'timeout', JSON.stringify(ra));
    assert.match(ra.error.message, /step took longer than 1500 ms/);
    assert.ok(!rb.ok && rb.error.kind === 'crash', JSON.stringify(rb));
    assert.match(rb.error.message, /losing its state/);
    const later = await b.step(reply('fine'));
    assert.ok(!later.ok && later.error.kind === 'crash');
    const c = env.episode({});
    assert.ok((await c.start()).ok);
    assert.deepStrictEqual(await c.step(reply('fine')), { ok: true, value: { reward: 1, episode_done: true } });
    assert.ok(!isAlive(pid!), 'the hung worker was killed');
  });

  it('hostile code: os._exit and memory blown past the cap are crashes; the runner recovers', async () => {
    const env = await open('hostile.env.py', `
import os
class Hostile:
    def __init__(self, problem):
        self.kind = problem["kind"]
    def initial_observation(self):
        return [{"role": "user", "content": "hi"}]
    def step(self, message):
        if self.kind == "exit":
            os._exit(3)
        if self.kind == "memory":
            x = bytearray(4 * 1024 * 1024 * 1024)
        print('{"type": "result", "id": 0, "value": 1, "durationMs": 0}')
        return {"reward": 1, "episode_done": True}
`, { workers: 1 });
    const exit = env.episode({ kind: 'exit' });
    await exit.start();
    const r = await exit.step(reply('x'));
    assert.ok(!r.ok && r.error.kind === 'crash', JSON.stringify(r));
    assert.match(r.error.message, /exited with code 3/);
    const mem = env.episode({ kind: 'memory' });
    assert.ok((await mem.start()).ok);
    const m = await mem.step(reply('x'));
    assert.ok(!m.ok && (m.error.kind === 'crash' || m.error.kind === 'exception'), JSON.stringify(m));
    assert.match(m.error.message, /memory/i);
    const ok = env.episode({ kind: 'print' });
    assert.ok((await ok.start()).ok);
    assert.deepStrictEqual(await ok.step(reply('x')), { ok: true, value: { reward: 1, episode_done: true } }, 'prints that look like protocol messages do not corrupt it');
  });

  it('load errors: no class, several classes and none named, a named class missing, a syntax error', async () => {
    const fails = async (name: string, source: string, className?: string) => {
      try {
        await open(name, source, className ? { className } : {});
      } catch (e) {
        assert.ok(e instanceof RewardLoadError, String(e));
        return e;
      }
      assert.fail(`${name} loaded`);
    };
    assert.match((await fails('none.env.py', 'x = 1\n')).message, /no environment class in the file/);
    const two = 'class A:\n    def __init__(self, problem): pass\n    def initial_observation(self): return []\n    def step(self, m): return 1\nclass B(A):\n    pass\n';
    assert.match((await fails('two.env.py', two)).message, /several environment classes \(A, B\)/);
    const env = await open('two.env.py', two, { className: 'B' });
    assert.strictEqual(env.className, 'B');
    assert.match((await fails('two.env.py', two, 'C')).message, /no class C/);
    assert.match((await fails('syntax.env.py', 'class A(:\n')).message, /SyntaxError/);
    assert.match((await fails('none.env.js', 'exports.x = 1;')).message, /no environment class is exported/);
    assert.match((await fails('ctor.env.py', 'class A:\n    def __init__(self): pass\n    def initial_observation(self): return []\n    def step(self, m): return 1\n')).message, /must take the dataset line as its one argument/);
  });

  it('a load error names an environment file, not a reward file (Python and JavaScript, a syntax error and a missing class)', async () => {
    for (const [name, source] of [['syntax.env.py', 'class A(:\n'], ['none.env.py', 'x = 1\n'], ['syntax.env.js', 'exports.A = class {'], ['bad.env.rb', 'x']] as const) {
      await assert.rejects(open(name, source), (e: Error) => e instanceof RewardLoadError && new RegExp(`^Cannot load environment file ${name.replace(/\./g, '\\.')}`).test(e.message) && !/reward file/.test(e.message), name);
    }
  });
});
