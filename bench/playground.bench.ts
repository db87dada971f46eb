// The sample playground on the embedded engine (real HTTP, the compute backend in a worker thread):
// side A = the shipped arith-gpt (the random model if its weights are missing), side B = a sampler
// checkpoint of a LoRA on it, N samples each through the playground session (one request per
// sample, both sides at once). Prints time to the first sample and samples/s per repetition and
// their medians. Asserts nothing.
//   BENCH=playground node scripts/bench.mjs      N=16 MAX_TOKENS=32 REPS=3 THREADS=1
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startPlayground } from '../src/core/playground/session';
import type { PlaygroundRequest } from '../src/core/playground/types';
import { loadRenderer } from '../src/core/render';
import { ServiceClient } from '../src/core/tinker/client';
import { createComputeBackend } from '../src/engine/model';
import { ARITH_MODEL, RANDOM_MODEL } from '../src/engine/model/models';
import { startEngineServer } from '../src/engine/server';

const N = Number(process.env.N ?? 16);
const MAX_TOKENS = Number(process.env.MAX_TOKENS ?? 32);
const REPS = Number(process.env.REPS ?? 3);
const THREADS: 1 | 2 = process.env.THREADS === '2' ? 2 : 1;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-playground-bench-'));
  const backend = await createComputeBackend({ inWorker: true, gemmThreads: THREADS });
  const model = backend.listBaseModels().some((m) => m.name === ARITH_MODEL) ? ARITH_MODEL : RANDOM_MODEL;
  const server = await startEngineServer({ dataDir: path.join(dir, 'engine'), backend });
  const service = await ServiceClient.connect({ baseUrl: server.url, clientVersion: 'bench' });
  try {
    const tc = await service.createLoraTrainingClient(model, { rank: 8, seed: 1 });
    const saved = await (await tc.saveWeightsForSampler('bench')).result();
    if (!saved.path) throw new Error('the engine named no sampler checkpoint');
    const deps = { service, rendererFor: (m: string) => loadRenderer({ model: m, cacheDir: path.join(dir, 'cache') }) };
    console.log(`playground: A = ${model}, B = a sampler checkpoint of it; N = ${N} per side, max_tokens ${MAX_TOKENS}, temperature 1, ${THREADS} GEMM thread(s)`);
    console.log('rep  first sample ms  total s  samples  samples/s');
    const firsts: number[] = [];
    const rates: number[] = [];
    for (let rep = 0; rep < REPS; rep++) {
      const req: PlaygroundRequest = {
        prompt: { messages: [{ role: 'user', content: `What is ${12 + rep} + ${30 + rep}?` }] },
        params: { temperature: 1, topP: 1, topK: -1, maxTokens: MAX_TOKENS, n: N, seed: 100 * rep },
        sides: { A: { kind: 'base', model }, B: { kind: 'checkpoint', path: saved.path } },
      };
      const t0 = performance.now();
      let first: number | undefined;
      let samples = 0;
      const run = startPlayground(req, deps);
      for await (const e of run) {
        if (e.type === 'sideError') throw new Error(e.message);
        if (e.type === 'sample') {
          first ??= performance.now() - t0;
          samples++;
        }
      }
      await run.summary;
      const total = (performance.now() - t0) / 1000;
      firsts.push(first ?? NaN);
      rates.push(samples / total);
      console.log(`${String(rep).padStart(3)}  ${(first ?? NaN).toFixed(0).padStart(15)}  ${total.toFixed(2).padStart(7)}  ${String(samples).padStart(7)}  ${(samples / total).toFixed(1).padStart(9)}`);
    }
    console.log(`median: time to first sample ${median(firsts).toFixed(0)} ms, ${median(rates).toFixed(1)} samples/s (${2 * N} samples per run, both sides at once)`);
  } finally {
    service.close();
    await server.close();
    await backend.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
