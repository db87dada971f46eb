// Throughput of the embedded engine's compute backend (no HTTP): training tokens/s for
// forward_backward + optim_step with LoRA and with full-parameter training, and sampling tokens/s (in this thread, and through the worker thread the server uses),
// on the shipped model (tinker-studio/arith-gpt, or the random model of the same architecture when
// the weights file is missing). The GEMM kernel runs with THREADS threads (default: 1, then 2 in a
// second process — the engine process uses 2). Prints figures; asserts nothing.
//   BENCH=engine node scripts/bench.mjs        BATCH=64 SEQ=32 RANK=8 REPS=3
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { EngineDatum, SamplingParams } from '../src/engine/contract';
import { initCompute } from '../src/engine/compute';
import { LocalBackend, createComputeBackend } from '../src/engine/model';
import { ARITH_MODEL, RANDOM_MODEL, encodeChat } from '../src/engine/model/models';
import { errorMessage } from '../src/core/errors';

const BATCH = Number(process.env.BATCH ?? 64);
const SEQ = Number(process.env.SEQ ?? 32);
const RANK = Number(process.env.RANK ?? 8);
const REPS = Number(process.env.REPS ?? 3);
const SAMPLE_TOKENS = 32;
const ADAM = { learningRate: 1e-4, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 };

/** BATCH sequences of SEQ tokens from addition dialogues (input = tokens, targets = next tokens). */
function batch(): EngineDatum[] {
  return Array.from({ length: BATCH }, (_, i) => {
    let toks: number[] = [];
    for (let j = 0; toks.length < SEQ + 1; j++) {
      toks = toks.concat(encodeChat(`<|im_start|>user\nWhat is ${(i * 37 + j) % 100} + ${(i * 11 + 3 * j) % 100}?<|im_end|>\n<|im_start|>assistant\n${((i * 37 + j) % 100) + ((i * 11 + 3 * j) % 100)}<|im_end|>\n`));
    }
    toks = toks.slice(0, SEQ + 1);
    return {
      tokens: Int32Array.from(toks.slice(0, -1)),
      lossFnInputs: {
        target_tokens: { dtype: 'int64', data: Float64Array.from(toks.slice(1)), shape: [SEQ] },
        weights: { dtype: 'float32', data: new Float32Array(SEQ).fill(1), shape: [SEQ] },
      },
    };
  });
}

/** Median wall time (ms) and the process's CPU time over it (ms; on a busy machine CPU < wall × threads). */
async function timed(reps: number, fn: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  await fn(); // warm-up
  const runs: Array<{ wall: number; cpu: number }> = [];
  for (let i = 0; i < reps; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await fn();
    const c = process.cpuUsage(c0);
    runs.push({ wall: performance.now() - t0, cpu: (c.user + c.system) / 1000 });
  }
  return runs.sort((a, b) => a.wall - b.wall)[Math.floor(runs.length / 2)]!;
}

async function run(threads: 1 | 2): Promise<void> {
  const info = await initCompute({ threads, log: () => undefined });
  let backend: LocalBackend;
  try {
    backend = new LocalBackend({ gemmThreads: threads });
  } catch (err) {
    // the weights file may be mid-rewrite by a pretraining run: measure the random model instead
    console.log(`(the weights file could not be read: ${errorMessage(err)})`);
    backend = new LocalBackend({ gemmThreads: threads, weightsDir: '/nonexistent' });
  }
  const models = backend.listBaseModels();
  const model = models.some((m) => m.name === ARITH_MODEL) ? ARITH_MODEL : RANDOM_MODEL;
  const params = models.find((m) => m.name === model)!.parameterCount;
  if (model !== ARITH_MODEL) console.log(`(the ${ARITH_MODEL} weights file is missing: measuring ${RANDOM_MODEL}, the same architecture)`);
  const data = batch();
  const prompt = Int32Array.from(encodeChat('<|im_start|>user\n27+58<|im_end|>\n<|im_start|>assistant\n'));
  const tokens = BATCH * SEQ;
  const line = (label: string, t: { wall: number; cpu: number }, n: number, per = 'per step') =>
    console.log(
      `  ${label.padEnd(62)} ${((n / t.wall) * 1000).toFixed(0).padStart(6)} tokens/s  (${t.wall.toFixed(0)} ms ${per}; CPU ${t.cpu.toFixed(0)} ms → ${((n / t.cpu) * 1000).toFixed(0)} tokens per CPU-second)`,
    );

  console.log(
    `${model}, ${(params / 1e6).toFixed(2)} M parameters; GEMM: ${info.kernel}, ${info.threads} thread(s); training batch ${BATCH} × ${SEQ} tokens = ${tokens} tokens; sampling ${SAMPLE_TOKENS} new tokens after a ${prompt.length}-token prompt, temperature 1, no stop`,
  );
  await backend.createTrainingModel('lora', model, { rank: RANK, seed: 1, trainAttn: true, trainMlp: true, trainUnembed: true });
  const lora = await timed(REPS, async () => {
    await backend.forwardBackward('lora', data, 'cross_entropy', {}, false);
    await backend.optimStep('lora', ADAM);
  });
  line(`train, LoRA rank ${RANK} (attn+mlp+unembed), cross_entropy`, lora, tokens);
  const rl = data.map((d) => ({
    tokens: d.tokens,
    lossFnInputs: {
      target_tokens: d.lossFnInputs.target_tokens!,
      logprobs: { dtype: 'float32' as const, data: new Float32Array(SEQ).fill(-2), shape: [SEQ] },
      advantages: { dtype: 'float32' as const, data: new Float32Array(SEQ).fill(0.5), shape: [SEQ] },
    },
  }));
  const is = await timed(REPS, async () => {
    await backend.forwardBackward('lora', rl, 'importance_sampling', {}, false);
    await backend.optimStep('lora', ADAM);
  });
  line(`train, LoRA rank ${RANK}, importance_sampling (GRPO's loss)`, is, tokens);
  await backend.releaseTrainingModel('lora');

  backend.createFullTrainingModel('full', model);
  const full = await timed(REPS, async () => {
    await backend.forwardBackward('full', data, 'cross_entropy', {}, false);
    await backend.optimStep('full', ADAM);
  });
  line('train, full-parameter, cross_entropy', full, tokens);
  await backend.releaseTrainingModel('full');

  await backend.createSampler('s', { baseModel: model });
  const sp = (seed: number): SamplingParams => ({ maxTokens: SAMPLE_TOKENS, temperature: 1, topP: 1, topK: -1, stopStrings: [], stopTokens: [], seed });
  let generated = 0;
  const concurrent = await timed(REPS, async () => {
    const rs = await Promise.all(Array.from({ length: 64 }, (_, i) => backend.sample('s', { prompt, numSamples: 1, params: sp(i), promptLogprobs: false, topkPromptLogprobs: 0 })));
    generated = rs.reduce((a, r) => a + r.sequences.reduce((b, q) => b + q.tokens.length, 0), 0);
  });
  line(`sample, 64 concurrent requests × 1 sequence (${generated} tokens)`, concurrent, generated, 'in all');
  const batched = await timed(REPS, async () => {
    const r = await backend.sample('s', { prompt, numSamples: 64, params: sp(7), promptLogprobs: false, topkPromptLogprobs: 0 });
    generated = r.sequences.reduce((b, q) => b + q.tokens.length, 0);
  });
  line(`sample, 1 request × 64 sequences (${generated} tokens, batched)`, batched, generated, 'in all');
  await backend.close();

  // as the engine server drives it: the backend in its worker thread, requests arriving as messages
  const worker = await createComputeBackend({ inWorker: true, gemmThreads: threads });
  await worker.createSampler('s', { baseModel: model });
  const viaWorker = await timed(REPS, async () => {
    const rs = await Promise.all(Array.from({ length: 64 }, (_, i) => worker.sample('s', { prompt, numSamples: 1, params: sp(i), promptLogprobs: false, topkPromptLogprobs: 0 })));
    generated = rs.reduce((a, r) => a + r.sequences.reduce((b, q) => b + q.tokens.length, 0), 0);
  });
  line(`sample, 64 concurrent requests × 1 sequence, engine worker (${generated} tokens)`, viaWorker, generated, 'in all');
  await worker.close();
}

async function main(): Promise<void> {
  const asked = process.env.THREADS;
  await run(asked === '2' ? 2 : 1);
  if (asked === undefined) {
    // the kernel's thread count is fixed per process: measure 2 threads in a fresh one
    console.log('');
    spawnSync(process.execPath, [__filename], { stdio: 'inherit', env: { ...process.env, THREADS: '2' } });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
