// A public benchmark on the embedded engine: problems per second of a GSM8K eval (the eval runner
// with `"benchmark": "gsm8k"`, graded by the TypeScript GSM8K grader) at concurrency 1, 8 and 64, the
// rows read through the project's hub loader from a STAND-IN of the Hugging Face datasets-server (the
// tests' GSM8K fixtures: short questions, so arith-chat's 256 positions hold prompt and answer; the
// first run downloads them, later runs read the cache). The engine's model scores near 0 on GSM8K:
// this measures the machinery, not the model. Each repetition writes a fresh results folder (no
// resume). Prints the median and worst of REPS. Asserts nothing.
//   BENCH=benchmark node scripts/bench.mjs     PROBLEMS=60 REPS=3 THREADS=2
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runEval } from '../src/core/evals/runEval';
import { ServiceClient } from '../src/core/tinker/client';
import { createComputeBackend } from '../src/engine/model';
import { startEngineServer } from '../src/engine/server';
import { DatasetsServerStandIn } from '../test/unit/evals/hubStandIn';

const PROBLEMS = Number(process.env.PROBLEMS ?? 60);
const REPS = Number(process.env.REPS ?? 3);
const THREADS = process.env.THREADS === '1' ? 1 : 2;
const CONCURRENCY = [1, 8, 64];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-benchmark-bench-'));
  const backend = await createComputeBackend({ inWorker: true, gemmThreads: THREADS });
  const engine = await startEngineServer({ dataDir: path.join(dir, 'engine'), backend });
  const hub = await new DatasetsServerStandIn().start();
  const cacheDir = path.join(dir, 'cache');
  try {
    console.log(`GSM8K (stand-in fixtures) on the embedded engine: tinker-studio/arith-chat, ${PROBLEMS} problems × n = 1, the cookbook's defaults (temperature 0.6, max_tokens 32768 clamped to the 256-token context), ${THREADS} GEMM threads; ${REPS} repetitions`);
    console.log('concurrency  problems  sampled tokens   wall s (median / worst)   problems/s (median / worst)');
    for (const concurrency of CONCURRENCY) {
      const wall: number[] = [];
      let tokens = 0;
      for (let rep = 0; rep < REPS; rep++) {
        const work = fs.mkdtempSync(path.join(dir, 'case-'));
        const specFile = path.join(work, 'gsm8k.eval.json');
        fs.writeFileSync(specFile, JSON.stringify({ benchmark: 'gsm8k', max_problems: PROBLEMS, concurrency, seed: rep, targets: ['tinker-studio/arith-chat'] }));
        const t0 = performance.now();
        const s = await runEval({ specFile, cacheDir, datasetsServer: hub.url, connect: () => ServiceClient.connect({ baseUrl: engine.url, clientVersion: 'bench' }), resamples: 200 });
        wall.push((performance.now() - t0) / 1000);
        const t = s.targets[0]!;
        tokens = Math.round((t.metrics.completion_tokens?.value ?? 0) * t.samples);
      }
      const rate = wall.map((w) => PROBLEMS / w);
      console.log(`${String(concurrency).padStart(11)}  ${String(PROBLEMS).padStart(8)}  ${String(tokens).padStart(14)}   ${median(wall).toFixed(2).padStart(8)} / ${Math.max(...wall).toFixed(2).padEnd(8)}        ${median(rate).toFixed(2).padStart(8)} / ${Math.min(...rate).toFixed(2)}`);
    }
    console.log(`load average: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  } finally {
    await hub.stop();
    await engine.close();
    await backend.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
