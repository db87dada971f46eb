// Reward throughput: a trivial reward function (exact match) scored through the Python worker pool
// and through the JS runner, 20,000 cases in score() calls of 256 with 2 workers (the shape of a
// GRPO iteration's rewards). Prints rewards/s; asserts nothing.
//   BENCH=reward node scripts/bench.mjs        CASES=20000 BATCH=256 WORKERS=2
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { createRewardRunner, RewardCase } from '../src/core/reward';

const CASES = Number(process.env.CASES ?? 20_000);
const BATCH = Number(process.env.BATCH ?? 256);
const WORKERS = Number(process.env.WORKERS ?? 2);

const FILES: Array<[name: string, source: string]> = [
  ['reward.py', 'def compute_reward(completion, ground_truth):\n    return 1.0 if completion.strip() == ground_truth else 0.0\n'],
  ['reward.mjs', 'export function computeReward(completion, groundTruth) {\n  return completion.trim() === groundTruth ? 1 : 0;\n}\n'],
];

async function measure(file: string, cases: RewardCase[]): Promise<{ perSecond: number; startMs: number; mean: number }> {
  const t0 = performance.now();
  const runner = await createRewardRunner({ file, workers: WORKERS, timeoutMs: 60_000 });
  const startMs = performance.now() - t0;
  try {
    await runner.score(cases.slice(0, BATCH)); // warm-up
    let sum = 0;
    const t1 = performance.now();
    for (let i = 0; i < cases.length; i += BATCH) {
      for (const o of await runner.score(cases.slice(i, i + BATCH))) sum += o.reward;
    }
    const seconds = (performance.now() - t1) / 1000;
    return { perSecond: cases.length / seconds, startMs, mean: sum / cases.length };
  } finally {
    await runner.close();
  }
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-reward-bench-'));
  const cases: RewardCase[] = Array.from({ length: CASES }, (_, i) => ({ completion: i % 2 === 0 ? ` ${i % 200} ` : 'no answer', groundTruth: String(i % 200) }));
  console.log(`reward throughput: ${CASES} cases in score() calls of ${BATCH}, ${WORKERS} workers, exact-match reward`);
  for (const [name, source] of FILES) {
    const file = path.join(dir, name);
    fs.writeFileSync(file, source);
    const { perSecond, startMs, mean } = await measure(file, cases);
    console.log(`  ${name.endsWith('.py') ? 'Python' : 'JS    '} ${name.padEnd(11)} ${Math.round(perSecond).toLocaleString('en-US').padStart(8)} rewards/s   (pool start ${startMs.toFixed(0)} ms, mean reward ${mean.toFixed(3)})`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
