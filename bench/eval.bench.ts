// Evaluation throughput: samples per second of the eval runner (src/core/evals/runEval.ts: every
// target's requests interleaved under one bounded concurrency, graded by the arithmetic example's
// Python reward) for 1 target and for 4 targets on the same problems, on two backends:
//   (a) the embedded engine (real HTTP; its compute backend in a worker thread with 2 GEMM threads,
//       as in the CLI): the 2 cores are the limit, so 4 targets take about 4 times as long;
//   (b) a STAND-IN of a remote Tinker server (a local HTTP server speaking the Tinker sampling
//       protocol that answers every sample DELAY_MS (default 200) after it was asked, whatever the
//       load, like a remote service with capacity to spare): with the concurrency above the
//       requests of all targets together, 4 targets take about as long as 1; with the default
//       concurrency (16), the bound is the concurrency, and the time grows with the samples again.
// Every repetition writes to a fresh results folder (no resume). Prints per case the median and the
// worst of REPS repetitions. Asserts nothing.
//   BENCH=eval node scripts/bench.mjs     PROBLEMS=32 N=4 MAX_TOKENS=6 REPS=3 DELAY_MS=200
// (each run also pays a fixed cost: the Python grader's workers, the renderer, the sampling sessions;
// it is printed apart, measured as an eval of 1 problem × n = 1)
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { runEval } from '../src/core/evals/runEval';
import { ServiceClient } from '../src/core/tinker/client';
import { encodeSampleResponse } from '../src/core/tinker/proto';
import { RetrieveFutureRequest } from '../src/core/tinker/wire';
import { createComputeBackend } from '../src/engine/model';
import { ARITH_MODEL, RANDOM_MODEL, encodeChat } from '../src/engine/model/models';
import { startEngineServer } from '../src/engine/server';

const PROBLEMS = Number(process.env.PROBLEMS ?? 32);
const N = Number(process.env.N ?? 4);
const MAX_TOKENS = Number(process.env.MAX_TOKENS ?? 6);
const REPS = Number(process.env.REPS ?? 3);
const DELAY_MS = Number(process.env.DELAY_MS ?? 200);
const EXAMPLE = path.resolve(__dirname, '../../examples/arithmetic');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The stand-in of a remote Tinker server: each sample is answered DELAY_MS after its request. */
async function startStandIn(): Promise<{ url: string; close(): Promise<void>; maxInFlight(): number }> {
  const answer = Buffer.from(
    encodeSampleResponse({
      type: 'sample',
      sequences: [{ stop_reason: 'stop', tokens: encodeChat('42<|im_end|>'), logprobs: encodeChat('42<|im_end|>').map(() => -0.1) }],
      prompt_logprobs: null,
      topk_prompt_logprobs: null,
      prompt_cache_hit_tokens: 0,
    }),
  );
  let counter = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const due = new Map<string, number>();
  const json = (res: http.ServerResponse, v: unknown) => {
    const body = JSON.stringify(v);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const p = req.url ?? '';
      if (p.endsWith('/client/config')) return json(res, {});
      if (p.endsWith('/create_session')) return json(res, { type: 'create_session', session_id: 'stand-in' });
      if (p.endsWith('/session_heartbeat')) return json(res, { type: 'session_heartbeat' });
      if (p.endsWith('/create_sampling_session')) return json(res, { type: 'create_sampling_session', sampling_session_id: `stand-in:sample:${++counter}` });
      if (p.endsWith('/asample')) {
        const id = `s-${++counter}`;
        due.set(id, performance.now() + DELAY_MS);
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        return json(res, { request_id: id });
      }
      if (p.endsWith('/retrieve_future')) {
        const id = RetrieveFutureRequest.parse(JSON.parse(Buffer.concat(chunks).toString('utf8'))).request_id;
        const at = due.get(id);
        if (at === undefined) {
          res.writeHead(404, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ detail: `stand-in: no request ${id}` }));
        }
        // a long poll: the answer comes when the sample is due
        setTimeout(() => {
          if (due.delete(id)) inFlight--;
          res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': answer.length });
          res.end(answer);
        }, Math.max(0, at - performance.now()));
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: `stand-in: no ${p}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    maxInFlight: () => maxInFlight,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

interface Case {
  backend: string;
  targets: string[];
  concurrency?: number;
  connect: () => Promise<ServiceClient>;
}

async function runCase(dir: string, c: Case, model: string, size = { problems: PROBLEMS, n: N }): Promise<{ wall: number[]; rate: number[]; samples: number }> {
  const work = fs.mkdtempSync(path.join(dir, 'case-'));
  for (const f of ['holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(EXAMPLE, f), path.join(work, f));
  const specFile = path.join(work, 'bench.eval.json');
  fs.writeFileSync(
    specFile,
    JSON.stringify({
      dataset: { path: 'holdout.jsonl', prompt_field: 'question', ground_truth_field: 'answer', max_problems: size.problems },
      grader: { file: 'reward.py' },
      n: size.n,
      temperature: 1,
      max_tokens: MAX_TOKENS,
      backend: 'local',
      model,
      targets: c.targets,
      ...(c.concurrency ? { concurrency: c.concurrency } : {}),
    }),
  );
  const wall: number[] = [];
  const rate: number[] = [];
  let samples = 0;
  for (let rep = 0; rep < REPS; rep++) {
    const t0 = performance.now();
    let done = 0;
    await runEval({ specFile, out: path.join(work, `out-${rep}`), cacheDir: path.join(dir, 'cache'), connect: c.connect, onProgress: (p) => (done = p.done) });
    const s = (performance.now() - t0) / 1000;
    samples = done;
    wall.push(s);
    rate.push(done / s);
  }
  return { wall, rate, samples };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-eval-bench-'));
  const backend = await createComputeBackend({ inWorker: true, gemmThreads: 2 });
  const model = backend.listBaseModels().some((m) => m.name === ARITH_MODEL) ? ARITH_MODEL : RANDOM_MODEL;
  const engine = await startEngineServer({ dataDir: path.join(dir, 'engine'), backend });
  const standIn = await startStandIn();
  // runEval closes the client it opened when it ends
  const connectTo = (url: string) => () => ServiceClient.connect({ baseUrl: url, clientVersion: 'bench' });
  try {
    // three sampler checkpoints of LoRAs on the model: with the model itself, 4 targets
    const setup = await ServiceClient.connect({ baseUrl: engine.url, clientVersion: 'bench' });
    const paths: string[] = [];
    for (let i = 0; i < 3; i++) {
      const tc = await setup.createLoraTrainingClient(model, { rank: 8, seed: i + 1 });
      const saved = await (await tc.saveWeightsForSampler(`bench-${i}`)).result();
      if (!saved.path) throw new Error('the engine named no sampler checkpoint');
      paths.push(saved.path);
    }
    setup.close();
    const one = [model];
    const four = [model, ...paths];
    const fake = ['tinker://stand-in:train:1/sampler_weights/a', 'tinker://stand-in:train:2/sampler_weights/b', 'tinker://stand-in:train:3/sampler_weights/c'];
    const all = PROBLEMS * N * 4;
    console.log(
      `eval throughput: ${PROBLEMS} arithmetic problems × n = ${N} per target, max_tokens ${MAX_TOKENS}, temperature 1, Python grader (examples/arithmetic/reward.py); ` +
        `model ${model}; ${REPS} repetitions, each into a fresh results folder; stand-in delay ${DELAY_MS} ms per sample`,
    );
    const cases: Array<Case & { label: string }> = [
      { label: 'embedded engine', backend: 'engine', targets: one, connect: connectTo(engine.url) },
      { label: 'embedded engine', backend: 'engine', targets: four, connect: connectTo(engine.url) },
      { label: `stand-in (${DELAY_MS} ms)`, backend: 'stand-in', targets: one, concurrency: all, connect: connectTo(standIn.url) },
      { label: `stand-in (${DELAY_MS} ms)`, backend: 'stand-in', targets: [model, ...fake], concurrency: all, connect: connectTo(standIn.url) },
      { label: `stand-in (${DELAY_MS} ms)`, backend: 'stand-in', targets: one, connect: connectTo(standIn.url) },
      { label: `stand-in (${DELAY_MS} ms)`, backend: 'stand-in', targets: [model, ...fake], connect: connectTo(standIn.url) },
    ];
    const fixed = await runCase(dir, { backend: 'stand-in', targets: one, connect: connectTo(standIn.url) }, model, { problems: 1, n: 1 });
    console.log(`fixed cost of an eval run (1 problem × n = 1 on the stand-in, ${DELAY_MS} ms of it the stand-in's delay): median ${median(fixed.wall).toFixed(2)} s, worst ${Math.max(...fixed.wall).toFixed(2)} s`);
    console.log('backend                       concurrency  targets  samples   wall s (median / worst)   samples/s (median / worst)');
    const medians = new Map<string, number>();
    for (const c of cases) {
      const r = await runCase(dir, c, model);
      const conc = c.concurrency ?? 16;
      medians.set(`${c.backend}:${conc}:${c.targets.length}`, median(r.wall));
      console.log(
        `${c.label.padEnd(28)}  ${String(conc).padStart(11)}  ${String(c.targets.length).padStart(7)}  ${String(r.samples).padStart(7)}   ` +
          `${median(r.wall).toFixed(2).padStart(8)} / ${Math.max(...r.wall).toFixed(2).padEnd(8)}        ${median(r.rate).toFixed(1).padStart(8)} / ${Math.min(...r.rate).toFixed(1)}`,
      );
    }
    const ratio = (k: string) => (medians.get(`${k}:4`)! / medians.get(`${k}:1`)!).toFixed(2);
    console.log(`wall time of 4 targets ÷ 1 target (medians): embedded engine ${ratio('engine:16')}×; stand-in, concurrency ${all}: ${ratio(`stand-in:${all}`)}×; stand-in, concurrency 16: ${ratio('stand-in:16')}×`);
    console.log(`the stand-in saw at most ${standIn.maxInFlight()} samples in flight at once`);
  } finally {
    await standIn.close();
    await engine.close();
    await backend.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
