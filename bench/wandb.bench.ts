// A run's wall time with and without W&B logging, W&B being a stand-in that never answers (the
// worst case: every request hangs). SFT on the embedded engine (real HTTP); the W&B run waits at the
// end for its bounded finish (FINISH_MS, 30 s in the product), printed apart from the training time.
// Asserts nothing.   BENCH=wandb node scripts/bench.mjs      STEPS=8 FINISH_MS=2000
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startSftRun } from '../src/core/sft/start';
import { ServiceClient } from '../src/core/tinker/client';
import { wandbTrackerFactory } from '../src/core/tracking/wandbSetup';
import { createComputeBackend } from '../src/engine/model';
import { RANDOM_MODEL } from '../src/engine/model/models';
import { startEngineServer } from '../src/engine/server';
import { WandbStandIn } from '../test/unit/tracking/wandbStandIn';

const STEPS = Number(process.env.STEPS ?? 8);
const FINISH_MS = Number(process.env.FINISH_MS ?? 2000);

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-wandb-bench-'));
  const backend = await createComputeBackend({ inWorker: true, gemmThreads: 2 });
  const server = await startEngineServer({ dataDir: path.join(dir, 'engine'), backend });
  const standIn = new WandbStandIn();
  standIn.mode = 'hang';
  const baseUrl = await standIn.listen();
  const chats = Array.from({ length: 32 }, (_, i) => ({ messages: [{ role: 'user', content: `${i % 10}+1=` }, { role: 'assistant', content: String((i % 10) + 1) }] }));
  fs.writeFileSync(path.join(dir, 'chats.jsonl'), chats.map((c) => JSON.stringify(c)).join('\n') + '\n');
  const specFile = path.join(dir, 'bench.sft.json');
  fs.writeFileSync(specFile, JSON.stringify({ model: RANDOM_MODEL, lora_rank: 4, learning_rate: 0.01, batch_size: 4, max_steps: STEPS, eval_every: 0, save_every: 0, wandb_project: 'bench', dataset: { path: 'chats.jsonl' } }));
  const connect = () => ServiceClient.connect({ baseUrl: server.url, clientVersion: 'bench' });
  const loggerScript = path.resolve(__dirname, '../src/core/tracking/wandbLogger.js');
  try {
    console.log(`SFT ${STEPS} steps on ${RANDOM_MODEL}; W&B stand-in hanging every request; finish bound ${FINISH_MS} ms`);
    for (const withWandb of [false, true]) {
      let lastRowAt = 0;
      const t0 = performance.now();
      const r = await startSftRun({
        specFile,
        runsDir: path.join(dir, withWandb ? 'runs-wandb' : 'runs-plain'),
        connect,
        cacheDir: path.join(dir, 'cache'),
        onEvent: (e) => e.type === 'metrics' && (lastRowAt = performance.now()),
        ...(withWandb ? { tracking: { tracker: wandbTrackerFactory({ apiKey: 'bench', baseUrl, env: {}, tuning: { loggerScript, finishTimeoutMs: FINISH_MS } }) } } : {}),
      });
      const total = performance.now() - t0;
      console.log(`${withWandb ? 'with W&B (hanging)' : 'without W&B       '}: ${r.status}; training to the last row ${(lastRowAt - t0).toFixed(0)} ms, whole run ${total.toFixed(0)} ms`);
    }
  } finally {
    await standIn.close();
    await server.close();
    await backend.close?.();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
