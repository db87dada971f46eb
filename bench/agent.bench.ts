// The agent session's per-call overhead on the embedded engine (backend in a worker thread, real
// HTTP): init_grpo on the arithmetic example (small overrides), then CALLS × train_grpo_step(1).
// For each call: its wall time, the iteration's own phases (the step's time/total in metrics.jsonl)
// and the difference — what a call costs beyond training (connecting, creating or loading the
// training client, saving, reward workers, run-directory bookkeeping). Prints each call, then the
// mean and the worst overhead of the calls after the first. Asserts nothing. The file uses only
// initGrpo / trainGrpoStep / finish, so the same bench runs against older session code.
//   BENCH=agent node scripts/bench.mjs      CALLS=8 GROUPS=8 GROUP_SIZE=4 THREADS=2
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TrainingSession } from '../src/core/agent/session';
import { ServiceClient } from '../src/core/tinker/client';
import { createComputeBackend } from '../src/engine/model';
import { ARITH_MODEL, RANDOM_MODEL } from '../src/engine/model/models';
import { startEngineServer } from '../src/engine/server';

const CALLS = Number(process.env.CALLS ?? 8);
const GROUPS = Number(process.env.GROUPS ?? 8);
const GROUP_SIZE = Number(process.env.GROUP_SIZE ?? 4);
const THREADS: 1 | 2 = process.env.THREADS === '1' ? 1 : 2;
const EXAMPLE = path.resolve(__dirname, '../../examples/arithmetic');

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-agent-bench-'));
  const backend = await createComputeBackend({ inWorker: true, gemmThreads: THREADS });
  const model = backend.listBaseModels().some((m) => m.name === ARITH_MODEL) ? ARITH_MODEL : RANDOM_MODEL;
  const server = await startEngineServer({ dataDir: path.join(dir, 'engine'), backend });
  const session = new TrainingSession({
    runsDir: path.join(dir, 'runs'),
    cacheDir: path.join(dir, 'cache'),
    baseDir: EXAMPLE,
    connect: () => ServiceClient.connect({ baseUrl: server.url, clientVersion: 'bench' }),
  });
  try {
    const overrides = { name: 'agent-bench', model, groups_per_batch: GROUPS, group_size: GROUP_SIZE, iterations: CALLS + 1, eval_every: 0, save_every: 0 };
    await session.initRun('grpo', { spec_file: 'arith.grpo.json', overrides });
    console.log(`agent session: train_grpo_step(1) × ${CALLS} on ${model}, ${GROUPS} groups × ${GROUP_SIZE}, ${THREADS} GEMM thread(s)`);
    console.log('call  wall ms  iteration ms  overhead ms');
    const overheads: number[] = [];
    for (let k = 0; k < CALLS; k++) {
      const t0 = performance.now();
      const r = await session.trainRun('grpo', { num_steps: 1 });
      const wall = performance.now() - t0;
      const rows = fs
        .readFileSync(path.join(r.value.run_dir, 'metrics.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, number>);
      const row = [...rows].reverse().find((x) => x.step === r.value.last_step);
      const own = (row?.['time/total'] ?? NaN) * 1000;
      const overhead = wall - own;
      if (k > 0) overheads.push(overhead);
      console.log(`${String(k).padStart(4)}  ${wall.toFixed(0).padStart(7)}  ${own.toFixed(0).padStart(12)}  ${overhead.toFixed(0).padStart(11)}${k === 0 ? '  (first call: not in the summary)' : ''}`);
    }
    const mean = overheads.reduce((a, b) => a + b, 0) / overheads.length;
    console.log(`per-call overhead of train_grpo_step(1) over calls 2..${CALLS}: mean ${mean.toFixed(0)} ms, worst ${Math.max(...overheads).toFixed(0)} ms`);
    await session.finish();
  } finally {
    await server.close();
    await backend.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
