import * as assert from 'assert';
import { createRewardRunner } from '../../../src/core/reward';
import { createNodeRewardRunner } from '../../../src/core/reward/node';
import { cases, failure, isAlive, positionOf, removeTempDirs, rewardFile, rewards, waitFor } from './fixtures';

// every behaviour below runs in real Node child processes; TypeScript so that stripping matters
const BEHAVIOURS_TS = `
interface Table { [key: string]: number }
const offsets: Table = { gt: 2 };

export async function computeReward(completion: string, groundTruth: string): Promise<number> {
  if (completion === 'throw') return helper(groundTruth);
  if (completion === 'spin') { for (;;) {} }
  if (completion === 'never') return new Promise<number>(() => undefined);
  if (completion === 'exit') process.exit(7);
  if (completion === 'hog') { const hoard: number[][] = []; for (;;) hoard.push(new Array<number>(1 << 16).fill(hoard.length)); }
  if (completion === 'print') {
    console.log('p'.repeat(1 << 20));
    console.error('{"type":"reward","index":0,"reward":99,"durationMs":0}');
    return 0.25;
  }
  if (completion === 'pid') return process.pid;
  if (completion.startsWith('later:')) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    completion = completion.slice('later:'.length);
  }
  return Number(completion) * 2 + (offsets[groundTruth] as number);
}

function helper(text: string): number {
  const parsed: { value: number } = JSON.parse(text);
  return parsed.value;
}
`;

describe('JS/TS reward runner', function () {
  this.timeout(60_000);
  after(removeTempDirs);
  let runner: Awaited<ReturnType<typeof createNodeRewardRunner>> | undefined;
  afterEach(async () => {
    await runner?.close();
    runner = undefined;
  });

  const start = async (opts: { timeoutMs?: number; memoryMb?: number } = {}) => {
    runner = await createNodeRewardRunner({ file: rewardFile('reward.ts', BEHAVIOURS_TS), workers: 2, timeoutMs: 30_000, ...opts });
    return runner;
  };

  it('scores a batch of a TypeScript async computeReward in order, over separate worker processes', async () => {
    const r = await start();
    // every 7th case resolves only after a turn of the event loop
    const numbers = Array.from({ length: 300 }, (_, i) => (i % 7 === 0 ? `later:${i}` : String(i)));
    const out = await r.score(cases(...numbers));
    assert.deepStrictEqual(rewards(out), numbers.map((_, i) => i * 2 + 2));
    const pids = rewards(await r.score(cases(...Array.from({ length: 16 }, () => 'pid'))));
    assert.deepStrictEqual(new Set(pids), new Set(r.pids()), 'both workers took part');
    assert.ok(!pids.includes(process.pid), 'reward code does not run in this process');
  });

  for (const [name, source] of [
    ['r.mjs', 'export function computeReward(completion, groundTruth) { return completion === groundTruth ? 1 : 0; }\n'],
    ['r.js', 'import { basename } from "path";\nexport const computeReward = (completion, groundTruth) => (basename(completion) === groundTruth ? 1 : 0);\n'],
    ['r.cjs', 'const path = require("path");\nexports.computeReward = function (completion, groundTruth) { return path.basename(completion) === groundTruth; };\n'],
    ['r.js', 'module.exports = { computeReward(completion, groundTruth) { return completion === groundTruth ? 1 : 0; } };\n'],
    ['r.ts', 'const same = (a: string, b: string): boolean => a === b;\nmodule.exports = { computeReward: (completion: string, groundTruth: string) => (same(completion, groundTruth) ? 1 : 0) };\n'],
  ]) {
    it(`loads ${name} written as ${/require|module\.exports|exports\./.test(source) ? 'CommonJS' : 'an ES module'}`, async () => {
      const r = await createRewardRunner({ file: rewardFile(name, source), workers: 1 });
      try {
        assert.deepStrictEqual(rewards(await r.score([{ completion: 'gt', groundTruth: 'gt' }, { completion: 'x', groundTruth: 'gt' }])), [1, 0]);
      } finally {
        await r.close();
      }
    });
  }

  it('scores an exception 0 with its stack and the line and column in the TypeScript file', async () => {
    const r = await start();
    const out = await r.score([
      { completion: '1', groundTruth: 'gt' },
      { completion: 'throw', groundTruth: '{oops' },
    ]);
    assert.strictEqual(out[0]?.ok && out[0].reward, 4);
    const f = failure(out[1]);
    assert.strictEqual(f.error.kind, 'exception');
    assert.match(f.error.message, /^SyntaxError: .*JSON/);
    const at = positionOf(BEHAVIOURS_TS, 'parse(text)');
    assert.deepStrictEqual([f.error.line, f.error.column], [at.line, at.column], 'the innermost frame in the reward file');
    assert.match(f.error.traceback ?? '', /at helper \(file:\/\/.*reward\.ts:\d+:\d+\)/);
    assert.doesNotMatch(f.error.traceback ?? '', /\[eval\]/, 'the worker frames are not shown');
  });

  it('stops a synchronous loop past the time limit, replaces the worker and loses no other case', async () => {
    const r = await start({ timeoutMs: 3000 });
    const before = r.pids();
    const numbers = Array.from({ length: 40 }, (_, i) => String(i));
    numbers[5] = 'spin';
    const out = await r.score(cases(...numbers));
    assert.deepStrictEqual(rewards(out), numbers.map((n) => (n === 'spin' ? 'timeout' : Number(n) * 2 + 2)));
    assert.match(failure(out[5]).error.message, /computeReward took longer than 3000 ms/);
    assert.ok(before.some((p) => !r.pids().includes(p)), 'the timed-out worker was replaced');
    assert.deepStrictEqual(rewards(await r.score(cases('5', '6'))), [12, 14]);
  });

  it('stops a promise that never settles the same way', async () => {
    const r = await start({ timeoutMs: 3000 });
    assert.deepStrictEqual(rewards(await r.score(cases('never', '1'))), ['timeout', 4]);
    assert.deepStrictEqual(rewards(await r.score(cases('2'))), [6]);
  });

  it('reports a worker that exits as a crash of that case and replaces it', async () => {
    const r = await start();
    const numbers = Array.from({ length: 40 }, (_, i) => String(i));
    numbers[10] = 'exit';
    const out = await r.score(cases(...numbers));
    assert.deepStrictEqual(rewards(out), numbers.map((n) => (n === 'exit' ? 'crash' : Number(n) * 2 + 2)));
    assert.match(failure(out[10]).error.message, /the Node worker exited with code 7 while running computeReward; it was replaced/);
    assert.deepStrictEqual(rewards(await r.score(cases('1'))), [4]);
  });

  it('reports a heap blown past the cap as a crash and recovers', async () => {
    const r = await start({ memoryMb: 64 });
    const out = await r.score(cases('hog', '1'));
    assert.deepStrictEqual(rewards(out), ['crash', 4]);
    assert.match(failure(out[0]).error.message, /ran out of memory \(the V8 heap cap is 64 MB\)/);
    assert.deepStrictEqual(rewards(await r.score(cases('2'))), [6]);
  });

  it('rejects results that are not finite numbers, keeping the raw value; booleans count as 1/0', async () => {
    runner = await createNodeRewardRunner({
      file: rewardFile(
        'values.mjs',
        'const VALUES = { nan: NaN, inf: -Infinity, str: "0.5", undef: undefined, obj: { a: 1 }, yes: true, int: 3 };\n' +
          'export function computeReward(completion, groundTruth) { return VALUES[completion]; }\n',
      ),
      workers: 1,
    });
    const out = await runner.score(cases('nan', 'inf', 'str', 'undef', 'obj', 'yes', 'int'));
    assert.deepStrictEqual(rewards(out), ['invalid_result', 'invalid_result', 'invalid_result', 'invalid_result', 'invalid_result', 1, 3]);
    assert.deepStrictEqual(
      out.slice(0, 5).map((o) => failure(o).raw),
      ['NaN', '-Infinity', '"0.5"', 'undefined', '{"a":1}'],
    );
    assert.strictEqual(failure(out[2]).error.message, 'computeReward returned "0.5" (string), not a finite number');
  });

  it('takes { reward, format } (format optional) and carries format; any other object is an invalid result naming what is wrong', async () => {
    runner = await createNodeRewardRunner({
      file: rewardFile(
        'formats.mjs',
        'const VALUES = { both: { reward: 0.5, format: 1 }, bool: { reward: true, format: false }, only: { reward: 2 }, extra: { reward: 1, correct: 1 }, noreward: { format: 1 }, badfmt: { reward: 1, format: "yes" } };\n' +
          'export async function computeReward(completion, groundTruth) { return VALUES[completion]; }\n',
      ),
      workers: 1,
    });
    const out = await runner.score(cases('both', 'bool', 'only', 'extra', 'noreward', 'badfmt'));
    assert.deepStrictEqual(rewards(out), [0.5, 1, 2, 'invalid_result', 'invalid_result', 'invalid_result']);
    assert.deepStrictEqual(
      out.slice(0, 3).map((o) => (o.ok ? o.format : 'failed')),
      [1, 0, undefined],
    );
    assert.deepStrictEqual(
      out.slice(3).map((o) => failure(o).error.message.replace(/^computeReward returned .* \(object\), /, '')),
      ['an object may hold only "reward" and "format" (it has "correct")', 'an object needs "reward"', 'its "format" is not a finite number'],
    );
  });

  it('keeps the protocol intact under a megabyte of console output', async () => {
    const r = await start();
    assert.deepStrictEqual(rewards(await r.score(cases('print', '1', 'print', '2'))), [0.25, 4, 0.25, 6]);
  });

  it('runs with an allowlisted environment: secrets and unlisted variables withheld, listed names passed', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { TINKER_API_KEY: 'tml-not-a-real-key', GITHUB_TOKEN: 'x', TINKER_TEST_VISIBLE: 'yes', TINKER_TEST_UNLISTED: 'x' });
    try {
      runner = await createNodeRewardRunner({
        file: rewardFile('env.cjs', 'exports.computeReward = (completion, groundTruth) => (completion in process.env ? 1 : 0);\n'),
        workers: 1,
        environment: ['TINKER_TEST_VISIBLE'],
      });
    } finally {
      for (const k of ['TINKER_API_KEY', 'GITHUB_TOKEN', 'TINKER_TEST_VISIBLE', 'TINKER_TEST_UNLISTED']) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
    assert.deepStrictEqual(rewards(await runner.score(cases('TINKER_API_KEY', 'GITHUB_TOKEN', 'TINKER_TEST_VISIBLE', 'TINKER_TEST_UNLISTED', 'PATH'))), [0, 0, 1, 0, 1]);
  });

  it('close() kills every worker and whatever the reward code started', async () => {
    const r = await createNodeRewardRunner({
      file: rewardFile(
        'spawner.cjs',
        'const { spawn } = require("child_process");\nexports.computeReward = (completion, groundTruth) => spawn("sleep", ["1000"], { stdio: "ignore" }).pid;\n',
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
});
