import * as assert from 'assert';
import { createRewardRunner, RewardRunner } from '../../../src/core/reward';
import { createPythonRewardRunner } from '../../../src/core/reward/python';
import { cases, failure, isAlive, positionOf, removeTempDirs, rewardFile, rewards, waitFor } from './fixtures';

// every behaviour below runs real python3 worker processes
const BEHAVIOURS = `
import ctypes, os, threading

def compute_reward(completion, ground_truth):
    if completion == "raise":
        return helper(ground_truth)
    if completion == "spin":
        while True:
            pass
    if completion == "block":
        threading.Event().wait()
    if completion == "exit":
        os._exit(7)
    if completion == "segfault":
        ctypes.string_at(0)
    if completion == "hog":
        hoard = []
        while True:
            hoard.append(bytearray(16 * 1024 * 1024))
    if completion == "print":
        print("p" * (1024 * 1024))
        print("{\\"type\\": \\"reward\\", \\"index\\": 0, \\"reward\\": 99, \\"durationMs\\": 0}")
        return 0.25
    if completion == "pid":
        return os.getpid()
    if completion == "flood":
        os.write(4, b'{"type": "reward", "index": 0, "reward": 1, "pad": "' + b"x" * (3 * 1024 * 1024) + b'"}\\n')
        return 1.0
    if completion == "longfield":
        os.write(4, b'{"type": "failure", "index": 0, "kind": "exception", "durationMs": 0, "message": "' + b"m" * 100000 + b'"}\\n')
        return 1.0
    if completion == "bigerror":
        raise ValueError("e" * 5000000)
    return float(int(completion) * 2 + len(ground_truth))

def helper(text):
    return 1 / len(text[:0])
`;

describe('Python reward runner', function () {
  this.timeout(60_000);
  after(removeTempDirs);
  let runner: (RewardRunner & { pids(): number[] }) | undefined;
  afterEach(async () => {
    await runner?.close();
    runner = undefined;
  });

  const start = async (opts: { timeoutMs?: number; memoryMb?: number } = {}) => {
    runner = await createPythonRewardRunner({ file: rewardFile('reward.py', BEHAVIOURS), workers: 2, timeoutMs: 30_000, ...opts });
    return runner;
  };

  it('scores a batch, every outcome at its case position, spread over the workers', async () => {
    const r = await start();
    const numbers = Array.from({ length: 300 }, (_, i) => String(i));
    const out = await r.score(cases(...numbers));
    assert.deepStrictEqual(rewards(out), numbers.map((n) => Number(n) * 2 + 2));
    assert.ok(out.every((o) => o.durationMs >= 0));
    const pids = await r.score(cases(...Array.from({ length: 16 }, () => 'pid')));
    assert.deepStrictEqual(new Set(rewards(pids)), new Set(r.pids()), 'both workers took part');
    assert.strictEqual(r.pids().length, 2);
  });

  it('serves many concurrent score() calls (one per GRPO group), each getting its own outcomes', async () => {
    const r = await start();
    const groups = Array.from({ length: 24 }, (_, g) => Array.from({ length: 8 }, (_, i) => (g === 5 && i === 3 ? 'exit' : String(g * 8 + i))));
    const outs = await Promise.all(groups.map((group) => r.score(cases(...group))));
    outs.forEach((out, g) => assert.deepStrictEqual(rewards(out), groups[g].map((n) => (n === 'exit' ? 'crash' : Number(n) * 2 + 2))));
  });

  it('is chosen by createRewardRunner for a .py file', async () => {
    const r = await createRewardRunner({ file: rewardFile('r.py', 'def compute_reward(c, g):\n    return 0.5\n'), workers: 1 });
    try {
      assert.deepStrictEqual(rewards(await r.score(cases('x'))), [0.5]);
    } finally {
      await r.close();
    }
  });

  it('scores an exception 0 with its traceback and the line and column in the reward file', async () => {
    const r = await start();
    const out = await r.score(cases('1', 'raise', '2'));
    assert.deepStrictEqual(rewards(out), [4, 'exception', 6]);
    const f = failure(out[1]);
    assert.strictEqual(f.reward, 0);
    assert.strictEqual(f.error.message, 'ZeroDivisionError: division by zero');
    const call = positionOf(BEHAVIOURS, 'helper(ground_truth)');
    const division = positionOf(BEHAVIOURS, '1 / len');
    assert.match(f.error.traceback ?? '', new RegExp(`Traceback \\(most recent call last\\):[\\s\\S]*line ${call.line}, in compute_reward[\\s\\S]*line ${division.line}, in helper`));
    assert.doesNotMatch(f.error.traceback ?? '', /File "<string>"/, 'the worker frame is not shown');
    assert.deepStrictEqual([f.error.line, f.error.column], [division.line, division.column], 'the innermost frame in the reward file');
  });

  it('stops a call that spins past the time limit, replaces the worker and loses no other case', async () => {
    const r = await start({ timeoutMs: 3000 });
    const before = r.pids();
    // 40 cases in batches of 5: the spin opens a batch, so the four cases behind it are re-dispatched
    const numbers = Array.from({ length: 40 }, (_, i) => String(i));
    numbers[5] = 'spin';
    const out = await r.score(cases(...numbers));
    assert.deepStrictEqual(rewards(out), numbers.map((n) => (n === 'spin' ? 'timeout' : Number(n) * 2 + 2)));
    assert.match(failure(out[5]).error.message, /compute_reward took longer than 3000 ms; its worker was stopped and replaced/);
    const after = r.pids();
    assert.strictEqual(after.length, 2);
    assert.ok(before.some((p) => !after.includes(p)), 'the timed-out worker was replaced');
    assert.deepStrictEqual(rewards(await r.score(cases('5', '6', '7'))), [12, 14, 16], 'the pool scores the next batch');
  });

  it('stops a call that never returns (blocked forever) the same way', async () => {
    const r = await start({ timeoutMs: 3000 });
    assert.deepStrictEqual(rewards(await r.score(cases('block', '1'))), ['timeout', 4]);
    assert.deepStrictEqual(rewards(await r.score(cases('2'))), [6]);
  });

  it('reports a worker that exits (os._exit) as a crash of that case and replaces it', async () => {
    const r = await start();
    const numbers = Array.from({ length: 40 }, (_, i) => String(i));
    numbers[10] = 'exit';
    const out = await r.score(cases(...numbers));
    assert.deepStrictEqual(rewards(out), numbers.map((n) => (n === 'exit' ? 'crash' : Number(n) * 2 + 2)));
    assert.match(failure(out[10]).error.message, /the Python worker exited with code 7 while running compute_reward; it was replaced/);
    assert.strictEqual(r.pids().length, 2);
    assert.deepStrictEqual(rewards(await r.score(cases('4'))), [10]);
  });

  it('reports a segmentation fault as a crash at the reward file line', async () => {
    const r = await start();
    const out = await r.score(cases('segfault', '1'));
    assert.deepStrictEqual(rewards(out), ['crash', 4]);
    const f = failure(out[0]);
    assert.match(f.error.message, /killed by SIGSEGV/);
    assert.strictEqual(f.error.line, positionOf(BEHAVIOURS, 'ctypes.string_at(0)').line);
  });

  it('reports memory blown past the cap as a crash and recovers', async () => {
    const r = await start({ memoryMb: 256 });
    const out = await r.score(cases('hog', '1'));
    assert.deepStrictEqual(rewards(out), ['crash', 4]);
    assert.match(failure(out[0]).error.message, /ran out of memory \(the cap is 256 MB\)/);
    assert.deepStrictEqual(rewards(await r.score(cases('2', '3'))), [6, 8]);
  });

  it('rejects results that are not finite numbers, keeping the raw value; bools count as 1/0', async () => {
    runner = await createPythonRewardRunner({
      file: rewardFile(
        'values.py',
        'import math\nVALUES = {"nan": math.nan, "inf": -math.inf, "str": "0.5", "none": None, "list": [1], "true": True, "int": 3}\n' +
          'def compute_reward(completion, ground_truth):\n    return VALUES[completion]\n',
      ),
      workers: 1,
    });
    const out = await runner.score(cases('nan', 'inf', 'str', 'none', 'list', 'true', 'int'));
    assert.deepStrictEqual(rewards(out), ['invalid_result', 'invalid_result', 'invalid_result', 'invalid_result', 'invalid_result', 1, 3]);
    assert.deepStrictEqual(
      out.slice(0, 5).map((o) => failure(o).raw),
      ['nan', '-inf', "'0.5'", 'None', '[1]'],
    );
    assert.strictEqual(failure(out[0]).error.message, 'compute_reward returned nan (float), not a finite number');
    assert.strictEqual(failure(out[2]).error.message, "compute_reward returned '0.5' (str), not a finite number");
  });

  it('takes {"reward": x, "format": y} (format optional) and carries format; any other dict is an invalid result naming what is wrong', async () => {
    runner = await createPythonRewardRunner({
      file: rewardFile(
        'formats.py',
        'import math\nVALUES = {"both": {"reward": 0.5, "format": 1}, "bool": {"reward": True, "format": False}, "only": {"reward": 2}, "nofmt": {"reward": 1, "format": None},\n' +
          '  "extra": {"reward": 1, "correct": 1}, "noreward": {"format": 1}, "badfmt": {"reward": 1, "format": "yes"}, "nanreward": {"reward": math.nan}}\n' +
          'def compute_reward(completion, ground_truth):\n    return VALUES[completion]\n',
      ),
      workers: 1,
    });
    const out = await runner.score(cases('both', 'bool', 'only', 'nofmt', 'extra', 'noreward', 'badfmt', 'nanreward'));
    assert.deepStrictEqual(rewards(out), [0.5, 1, 2, 1, 'invalid_result', 'invalid_result', 'invalid_result', 'invalid_result']);
    assert.deepStrictEqual(
      out.slice(0, 4).map((o) => (o.ok ? o.format : 'failed')),
      [1, 0, undefined, undefined],
    );
    assert.deepStrictEqual(
      out.slice(4).map((o) => failure(o).error.message.replace(/^compute_reward returned .* \(dict\), /, '')),
      ['a dict may hold only "reward" and "format" (it has \'correct\')', 'a dict needs "reward"', 'its "format" is not a finite number', 'its "reward" is not a finite number'],
    );
  });

  it('keeps the protocol intact under a megabyte of prints, even ones that look like protocol messages', async () => {
    const r = await start();
    const out = await r.score(cases('print', '1', 'print', '2'));
    assert.deepStrictEqual(rewards(out), [0.25, 4, 0.25, 6]);
  });

  it('replaces a worker that sends a line over the cap, scoring that case 0 with a clear error; the others are scored', async () => {
    const r = await start();
    const out = await r.score(cases('1', 'flood', '2'));
    assert.deepStrictEqual(rewards(out), [4, 'crash', 6]);
    assert.match(failure(out[1]).error.message, /the reward worker broke its protocol \(it sent a message longer than 1048576 bytes.*\); it was replaced/);
    await waitFor(() => r.pids().length === 2, 'the replacement worker');
    assert.deepStrictEqual(rewards(await r.score(cases('3'))), [8]);
  });

  it('replaces a worker whose error report has a field over its cap', async () => {
    const r = await start();
    const out = await r.score(cases('longfield', '2'));
    assert.deepStrictEqual(rewards(out), ['crash', 6]);
    assert.match(failure(out[0]).error.message, /message is longer than 16384 characters/);
  });

  it('truncates a huge exception message in the worker: an ordinary exception, the worker kept', async () => {
    const r = await start();
    const pids = r.pids();
    const out = await r.score(cases('bigerror', '2'));
    assert.deepStrictEqual(rewards(out), ['exception', 6]);
    assert.ok(failure(out[0]).error.message.length <= 2000, `message of ${failure(out[0]).error.message.length} characters`);
    assert.deepStrictEqual(r.pids(), pids, 'no worker replaced');
  });

  it('rejects a score() whose signal aborts, dropping its work, and keeps serving', async () => {
    const r = await start();
    const controller = new AbortController();
    const pending = r.score(cases('spin', 'spin'), controller.signal);
    controller.abort(new Error('run cancelled'));
    await assert.rejects(pending, /run cancelled/);
    assert.deepStrictEqual(rewards(await r.score(cases('1'))), [4]);
  });

  it('runs with an allowlisted environment: secrets and unlisted variables withheld, listed names passed', async () => {
    const saved = { ...process.env };
    const names = ['TINKER_API_KEY', 'HF_TOKEN', 'MY_SECRET_THING', 'TINKER_TEST_VISIBLE', 'TINKER_TEST_UNLISTED', 'PYTHONTEST_FLAG', 'LC_TINKER_TEST'];
    Object.assign(process.env, { TINKER_API_KEY: 'tml-not-a-real-key', HF_TOKEN: 'x', MY_SECRET_THING: 'x', TINKER_TEST_VISIBLE: 'yes', TINKER_TEST_UNLISTED: 'x', PYTHONTEST_FLAG: '1', LC_TINKER_TEST: 'C' });
    const envFile = rewardFile('env.py', 'import os\ndef compute_reward(completion, ground_truth):\n    return 1.0 if completion in os.environ else 0.0\n');
    let plain: RewardRunner | undefined;
    try {
      runner = await createPythonRewardRunner({ file: envFile, workers: 1, environment: ['TINKER_TEST_VISIBLE', 'TINKER_API_KEY', 'HF_*'] });
      plain = await createPythonRewardRunner({ file: envFile, workers: 1 });
    } finally {
      for (const k of names) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
    try {
      assert.deepStrictEqual(rewards(await runner.score(cases(...names, 'PATH'))), [0, 1, 0, 1, 0, 1, 1, 1], 'listed names pass (the Tinker key never)');
      assert.deepStrictEqual(rewards(await plain.score(cases(...names, 'PATH'))), [0, 0, 0, 0, 0, 1, 1, 1], 'only the built-in allowlist without a list');
    } finally {
      await plain.close();
    }
  });

  it('close() kills every worker and whatever the reward code started, and later calls reject', async () => {
    const r = await createPythonRewardRunner({
      file: rewardFile(
        'spawner.py',
        'import os, subprocess\nchildren = []\ndef compute_reward(completion, ground_truth):\n' +
          '    children.append(subprocess.Popen(["sleep", "1000"]))\n    return children[-1].pid\n',
      ),
      workers: 2,
    });
    const workers = r.pids();
    assert.strictEqual(workers.length, 2);
    const grandchildren = rewards(await r.score(cases('a', 'b'))).map(Number);
    assert.ok([...workers, ...grandchildren].every(isAlive));
    await r.close();
    assert.ok(workers.every((pid) => !isAlive(pid)), 'workers are gone when close() resolves');
    await waitFor(() => grandchildren.every((pid) => !isAlive(pid)), 'the processes the reward code started to be gone');
    await assert.rejects(r.score(cases('a')), /closed/);
  });

  it('loads a reward file named like a standard module without hiding that module', async () => {
    runner = await createPythonRewardRunner({
      file: rewardFile('json.py', 'import json as stdlib_json\ndef compute_reward(completion, ground_truth):\n    return float(stdlib_json.loads(completion)["score"])\n'),
      workers: 1,
    });
    assert.deepStrictEqual(rewards(await runner.score(cases('{"score": 0.75}'))), [0.75]);
  });

  it('fails to start with a clear error when the interpreter does not exist', async () => {
    await assert.rejects(
      createRewardRunner({ file: rewardFile('r.py', 'def compute_reward(c, g):\n    return 1\n'), python: '/nonexistent/python3' }),
      (e: unknown) => e instanceof Error && e.name !== 'RewardLoadError' && /could not start \/nonexistent\/python3/.test(e.message),
    );
  });
});
