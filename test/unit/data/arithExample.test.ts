// The shipped arithmetic example (examples/arithmetic): its data is the engine's holdout rule, its
// spec loads into a prompt pool, and its reward function scores as its comment says (real Python).
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { loadPromptPool } from '../../../src/core/data/pool';
import { parseGrpoSpecFile } from '../../../src/core/grpo/spec';
import { isArithHoldout } from '../../../src/engine/model/models';

const root = path.resolve(__dirname, '../../../..');
const dir = path.join(root, 'examples/arithmetic');
const line = (x: number, y: number) => JSON.stringify({ question: `What is ${x} + ${y}?`, answer: x + y });

describe('the arithmetic example', () => {
  it("holdout.jsonl holds exactly the pairs the engine's arith-gpt never saw in pretraining, train.jsonl the rest", () => {
    const expectedTrain: string[] = [];
    const expectedHoldout: string[] = [];
    for (let x = 0; x < 100; x++) for (let y = 0; y < 100; y++) (isArithHoldout(x, y) ? expectedHoldout : expectedTrain).push(line(x, y));
    assert.strictEqual(fs.readFileSync(path.join(dir, 'holdout.jsonl'), 'utf8'), expectedHoldout.join('\n') + '\n');
    assert.strictEqual(fs.readFileSync(path.join(dir, 'train.jsonl'), 'utf8'), expectedTrain.join('\n') + '\n');
    assert.strictEqual(expectedTrain.length + expectedHoldout.length, 10000);
  });

  it('the spec loads into a pool: every training problem, every holdout problem, the exact pretraining question text', async () => {
    const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-arith-'));
    try {
      const { spec, dir: specDir } = await parseGrpoSpecFile(path.join(dir, 'arith.grpo.json'));
      const pool = await loadPromptPool(spec.dataset!, { specDir, seed: spec.seed, cacheDir });
      assert.strictEqual(pool.train.length, 8971);
      assert.strictEqual(pool.holdout.length, 1029);
      assert.deepStrictEqual(pool.skipped, []);
      for (const p of [...pool.train, ...pool.holdout]) {
        const m = /^What is (\d+) \+ (\d+)\?$/.exec(p.messages[0]!.content);
        assert.ok(m && p.messages.length === 1 && p.messages[0]!.role === 'user', JSON.stringify(p));
        assert.strictEqual(p.groundTruth, String(Number(m[1]) + Number(m[2])));
        assert.strictEqual(isArithHoldout(Number(m[1]), Number(m[2])), p.id.startsWith('holdout.jsonl:'));
      }
    } finally {
      fs.rmSync(cacheDir, { recursive: true, force: true });
    }
  });

  it('reward.py scores the last integer of the reply against the ground truth', () => {
    const cases: Array<[string, string, number]> = [
      ['42', '42', 1],
      [' 42', '42', 1],
      ['41', '42', 0],
      ['', '42', 0],
      ['no number', '7', 0],
      ['12, no: 13', '13', 1],
      ['13, no: 12', '13', 0],
      ['1,234', '1234', 1],
      ['-5', '-5', 1],
    ];
    const script = [
      'import json, sys',
      'sys.dont_write_bytecode = True',
      `sys.path.insert(0, ${JSON.stringify(dir)})`,
      'from reward import compute_reward',
      'cases = json.loads(sys.stdin.read())',
      'print(json.dumps([compute_reward(c, g) for c, g, _ in cases]))',
    ].join('\n');
    const out = execFileSync('python3', ['-c', script], { input: JSON.stringify(cases), encoding: 'utf8' });
    assert.deepStrictEqual(JSON.parse(out), cases.map((c) => c[2]));
  });
});
