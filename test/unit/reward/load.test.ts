import * as assert from 'assert';
import { createRewardRunner, RewardLoadError } from '../../../src/core/reward';
import * as path from 'path';
import { positionOf, removeTempDirs, rewardFile, rewards, tempDir } from './fixtures';

/** creating the runner must reject with a load error at this position, with this message */
async function rejectsToLoad(file: string, message: RegExp, at?: { line: number; column?: number }): Promise<RewardLoadError> {
  let caught: unknown;
  try {
    const runner = await createRewardRunner({ file, workers: 1, timeoutMs: 30_000 });
    await runner.close();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof RewardLoadError, `expected a RewardLoadError, got ${String(caught)}`);
  assert.strictEqual(caught.error.kind, 'load');
  assert.strictEqual(caught.file, file);
  assert.match(caught.error.message, message);
  assert.strictEqual(caught.line, at?.line, 'line');
  assert.strictEqual(caught.column, at?.column, 'column');
  return caught;
}

describe('Loading a reward file', function () {
  this.timeout(60_000);
  after(removeTempDirs);

  describe('Python', () => {
    it('reports a syntax error at its line and column', async () => {
      const src = 'def compute_reward(completion, ground_truth):\n    x = (1 +\n    return 1.0 if x else 0.0 ]\n';
      const e = await rejectsToLoad(rewardFile('r.py', src), /^SyntaxError: /, { line: 3, column: 30 });
      assert.match(e.message, /^Cannot load reward file r\.py:3:30: SyntaxError/);
    });

    it('reports a missing compute_reward', async () => {
      await rejectsToLoad(rewardFile('r.py', 'def computeReward(c, g):\n    return 1\n'), /no function compute_reward\(completion, ground_truth\) is defined/);
    });

    it('reports a compute_reward that is not callable, where it is bound', async () => {
      const src = 'import math\n\ncompute_reward = math.pi\n';
      await rejectsToLoad(rewardFile('r.py', src), /compute_reward is a float, not a function/, { line: 3, column: 1 });
    });

    it('reports the wrong number of parameters at the def', async () => {
      const one = 'import re\n\ndef compute_reward(completion):\n    return 1.0\n';
      await rejectsToLoad(rewardFile('r.py', one), /exactly two positional parameters \(completion, ground_truth\); it is declared as compute_reward\(completion\)/, { line: 3, column: 1 });
      const three = '@staticmethod\ndef compute_reward(completion, ground_truth, extra):\n    return 1.0\n';
      await rejectsToLoad(rewardFile('r.py', three), /declared as compute_reward\(completion, ground_truth, extra\)/, { line: 2, column: 1 });
    });

    it('accepts extra parameters that have defaults, and *args', async () => {
      for (const src of ['def compute_reward(c, g, weight=1.0):\n    return weight\n', 'def compute_reward(*args):\n    return len(args)\n']) {
        const runner = await createRewardRunner({ file: rewardFile('r.py', src), workers: 1 });
        try {
          const [outcome] = await runner.score([{ completion: 'a', groundTruth: 'b' }]);
          assert.ok(outcome?.ok);
        } finally {
          await runner.close();
        }
      }
    });

    it('reports an async def', async () => {
      await rejectsToLoad(rewardFile('r.py', 'async def compute_reward(c, g):\n    return 1\n'), /plain def, not async def/, { line: 1, column: 1 });
    });

    it('reports an exception raised by module-level code at its line', async () => {
      const src = 'import json\n\nTABLE = json.loads("{not json")\n\ndef compute_reward(c, g):\n    return 1\n';
      const e = await rejectsToLoad(rewardFile('r.py', src), /^json\.decoder\.JSONDecodeError: Expecting property name/, { line: 3, column: 9 });
      assert.match(e.error.traceback ?? '', /line 3, in <module>/);
    });

    it('reports module-level code that kills the worker', async () => {
      const e = await rejectsToLoad(rewardFile('r.py', 'import os\nos._exit(4)\ndef compute_reward(c, g):\n    return 1\n'), /^the worker exited with code 4 while loading the file$/);
      assert.match(e.message, /^Cannot load reward file r\.py: the worker exited with code 4/);
    });

    it('gives up on module-level code that never finishes after the load time limit', async () => {
      const file = rewardFile('r.py', 'import time\nwhile True:\n    time.sleep(1)\n');
      await assert.rejects(
        createRewardRunner({ file, workers: 1, loadTimeoutMs: 2000 }),
        (e: unknown) => e instanceof RewardLoadError && /loading the file took longer than 2000 ms/.test(e.error.message),
      );
    });

    it('runs the source it is given instead of the file on disk, with positions in that file', async () => {
      const file = rewardFile('r.py', 'def compute_reward(c, g):\n    return 1.0\n');
      const runner = await createRewardRunner({ file, source: 'def compute_reward(c, g):\n    return 0.5 if c else 1 / 0\n', workers: 1 });
      try {
        const [edited, failing] = await runner.score([{ completion: 'x', groundTruth: '' }, { completion: '', groundTruth: '' }]);
        assert.ok(edited?.ok && edited.reward === 0.5);
        assert.ok(failing && !failing.ok && failing.error.line === 2);
      } finally {
        await runner.close();
      }
      // a syntax error in the given text is reported although the file on disk is valid
      const broken = createRewardRunner({ file, source: 'def (c, g):\n', workers: 1 });
      await assert.rejects(broken, (e: unknown) => e instanceof RewardLoadError && e.line === 1 && e.column === 5 && e.file === file);
    });

    it('reports a file that does not exist', async () => {
      await rejectsToLoad('/nonexistent/dir/reward.py', /cannot read the file/);
    });
  });

  describe('JavaScript and TypeScript', () => {
    it('reports a CommonJS syntax error at its line and column', async () => {
      const src = 'exports.computeReward = function (completion, groundTruth) {\n  return completion +* groundTruth;\n};\n';
      await rejectsToLoad(rewardFile('r.cjs', src), /^SyntaxError: Unexpected token '\*'/, { line: 2, column: 22 });
    });

    it('reports an ES module syntax error at its line and column', async () => {
      const src = 'import * as path from "path";\n\nexport function computeReward(completion, groundTruth) {\n  return completion ===;\n}\n';
      await rejectsToLoad(rewardFile('r.mjs', src), /^SyntaxError: Unexpected token ';'/, { line: 4, column: 24 });
    });

    it('reports a TypeScript syntax error at its line and column', async () => {
      const src = 'export function computeReward(completion: string, groundTruth: string): number {\n  const n: number = ;\n  return n;\n}\n';
      await rejectsToLoad(rewardFile('r.ts', src), /^SyntaxError: Expression expected/, { line: 2, column: 21 });
    });

    it('reports TypeScript that type stripping cannot run (an enum)', async () => {
      const src = 'enum Grade { Bad, Good }\nexport function computeReward(c: string, g: string) { return Grade.Good; }\n';
      await rejectsToLoad(rewardFile('r.ts', src), /TypeScript feature not supported: TypeScript enum is not supported in strip-only mode/, { line: 1, column: 1 });
    });

    it('reports a missing computeReward export', async () => {
      await rejectsToLoad(rewardFile('r.mjs', 'export function compute_reward(c, g) { return 1; }\n'), /no function computeReward\(completion, groundTruth\) is exported/);
      await rejectsToLoad(rewardFile('r.js', 'function computeReward(c, g) { return 1; }\n'), /no function computeReward/);
    });

    it('reports a computeReward that is not a function, where it is declared', async () => {
      const src = '// scores\nexport const computeReward = 42;\n';
      await rejectsToLoad(rewardFile('r.mjs', src), /computeReward is a number, not a function/, { line: 2, column: 14 });
    });

    it('reports the wrong number of parameters where the function is declared', async () => {
      const src = 'const unused = 1;\nexport async function computeReward(completion: string): Promise<number> {\n  return 1;\n}\n';
      const file = rewardFile('r.ts', src);
      await rejectsToLoad(file, /computeReward must take exactly two parameters \(completion, groundTruth\); it declares 1/, positionOf(src, 'computeReward'));
      const cjs = 'module.exports = { computeReward: (a, b, c) => 1 };\n';
      await rejectsToLoad(rewardFile('r.cjs', cjs), /it declares 3/, positionOf(cjs, 'computeReward'));
    });

    it('reports an exception thrown by module-level code at its line', async () => {
      const src = 'const table = JSON.parse("{not json");\nexport function computeReward(c, g) { return table[c] ?? 0; }\n';
      const e = await rejectsToLoad(rewardFile('r.mjs', src), /^SyntaxError: .*JSON/, { line: 1, column: 20 });
      assert.match(e.error.traceback ?? '', /r\.mjs:1:20/);
    });

    it('reports module-level code that exits the worker', async () => {
      await rejectsToLoad(rewardFile('r.cjs', 'process.exit(3);\nexports.computeReward = (c, g) => 1;\n'), /^the worker exited with code 3 while loading the file$/);
    });

    it('runs the TypeScript source it is given instead of the file on disk', async () => {
      const file = rewardFile('r.ts', 'export function computeReward(c: string, g: string): number { return 1; }\n');
      const runner = await createRewardRunner({ file, source: 'export function computeReward(c: string, g: string): number { return 0.25; }\n', workers: 1 });
      try {
        const [outcome] = await runner.score([{ completion: 'x', groundTruth: 'y' }]);
        assert.ok(outcome?.ok && outcome.reward === 0.25);
      } finally {
        await runner.close();
      }
    });

    it('runs the text of a file that is not on disk yet (an unsaved editor), CommonJS or ES module', async () => {
      for (const [name, source] of [
        ['unsaved.ts', 'export function computeReward(c: string, g: string): number { return c === g ? 1 : 0; }\n'],
        ['unsaved.cjs', 'exports.computeReward = (c, g) => (c === g ? 1 : 0);\n'],
      ]) {
        const file = path.join(tempDir(), name);
        const runner = await createRewardRunner({ file, source, workers: 1 });
        try {
          assert.deepStrictEqual(rewards(await runner.score([{ completion: 'a', groundTruth: 'a' }, { completion: 'a', groundTruth: 'b' }])), [1, 0]);
        } finally {
          await runner.close();
        }
      }
    });

    it('rejects a file type it cannot run', async () => {
      await rejectsToLoad(rewardFile('r.rb', 'def compute_reward(c, g) 1 end\n'), /unsupported reward file type '\.rb'/);
    });
  });
});
