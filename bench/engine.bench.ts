// Throughput of the embedded engine's compute backend (no HTTP): training tokens/s for
// forward_backward + optim_step with LoRA and with full-parameter training, and sampling tokens/s (in this thread, and through the worker thread the server uses),
// on the shipped model (tinker-studio/arith-gpt, or the random model of the same architecture when
// the weights file is missing). The GEMM kernel runs with THREADS threads (default: 1, then 2 in a
// second process — the engine process uses 2). Then forward_backward alone, at 1 and 2 threads and
// their ratio, for arith-gpt and for a 256-position model of the arith-chat shape (the real
// tinker-studio/arith-chat when it is served, else a random 4-layer d=160 stand-in): at the demo's
// shapes (64 groups × 8 of a chat prompt and a 1–6-token completion, importance_sampling, the
// prompt forwarded once per group) and at full-context sequences (16 × 64 tokens for arith-gpt,
// 16 × 256 for the chat model, cross_entropy). Prints figures and the load average; asserts nothing.
//   BENCH=engine node scripts/bench.mjs        BATCH=64 SEQ=32 RANK=8 REPS=3 FB_REPS=7   ONLY=fb (just the forward_backward table)
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { EngineDatum, SamplingParams } from '../src/engine/contract';
import { initCompute } from '../src/engine/compute';
import { LocalBackend, createComputeBackend } from '../src/engine/model';
import { ENGINE_MEMORY_MB } from '../src/engine/model/backend';
import type { GptConfig } from '../src/engine/model/gptWeights';
import { ARITH_MODEL, RANDOM_MODEL, encodeChat } from '../src/engine/model/models';
import { errorMessage } from '../src/core/errors';

const BATCH = Number(process.env.BATCH ?? 64);
const SEQ = Number(process.env.SEQ ?? 32);
const RANK = Number(process.env.RANK ?? 8);
const REPS = Number(process.env.REPS ?? 3);
/** the forward_backward table's repetitions: its 2-thread figures swing with the neighbours' noise, so more of them */
const FB_REPS = Number(process.env.FB_REPS ?? 7);
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

const CHAT_MODEL = 'tinker-studio/arith-chat';
/** the arith-chat shape until its weights land: 4 layers, d = 160, 256 positions */
const CHAT_STANDIN: GptConfig = { vocabSize: 259, ctx: 256, d: 160, nLayer: 4, nHead: 4, ffn: 640 };

interface FbFigure {
  label: string;
  threads: 1 | 2;
  tokens: number;
  ms: number;
}

/** 64 groups × 8: a chat prompt, then 1–6 completion tokens; advantages ±0.5 on the completion. */
function demoBatch(): EngineDatum[] {
  const out: EngineDatum[] = [];
  for (let g = 0; g < 64; g++) {
    const prompt = encodeChat(`<|im_start|>user\nWhat is ${(g * 37) % 1000} + ${(g * 113) % 1000}?<|im_end|>\n<|im_start|>assistant\n`);
    for (let j = 0; j < 8; j++) {
      const len = 1 + ((g + j) % 6);
      const completion = Array.from({ length: len }, (_, t) => (t === len - 1 ? 258 : 48 + ((g * 7 + j * 3 + t) % 10)));
      const all = [...prompt, ...completion];
      const n = all.length - 1;
      const adv = j % 2 === 0 ? 0.5 : -0.5;
      out.push({
        tokens: Int32Array.from(all.slice(0, -1)),
        lossFnInputs: {
          target_tokens: { dtype: 'int64', data: Float64Array.from(all.slice(1)), shape: [n] },
          logprobs: { dtype: 'float32', data: new Float32Array(n).fill(-1.5), shape: [n] },
          advantages: { dtype: 'float32', data: Float32Array.from({ length: n }, (_, t) => (t >= prompt.length - 1 ? adv : 0)), shape: [n] },
        },
      });
    }
  }
  return out;
}

/** `count` sequences of `len` tokens of addition chats, every target weighted 1. */
function longBatch(count: number, len: number): EngineDatum[] {
  return Array.from({ length: count }, (_, i) => {
    let toks: number[] = [];
    for (let j = 0; toks.length < len + 1; j++) {
      const a = (i * 37 + j * 11) % 1000;
      const b = (i * 7 + j * 131) % 1000;
      toks = toks.concat(encodeChat(`<|im_start|>user\nWhat is ${a} + ${b}?<|im_end|>\n<|im_start|>assistant\n${a + b}<|im_end|>\n`));
    }
    toks = toks.slice(0, len + 1);
    return {
      tokens: Int32Array.from(toks.slice(0, -1)),
      lossFnInputs: {
        target_tokens: { dtype: 'int64', data: Float64Array.from(toks.slice(1)), shape: [len] },
        weights: { dtype: 'float32', data: new Float32Array(len).fill(1), shape: [len] },
      },
    };
  });
}

/** forward_backward alone (LoRA rank RANK on attn+mlp+unembed), median of FB_REPS after a warm-up. */
async function forwardBackwardFigures(threads: 1 | 2): Promise<FbFigure[]> {
  const figures: FbFigure[] = [];
  const lora = { rank: RANK, seed: 1, trainAttn: true, trainMlp: true, trainUnembed: true };
  const measure = async (backend: LocalBackend, model: string, label: string, data: EngineDatum[], loss: 'importance_sampling' | 'cross_entropy') => {
    await backend.createTrainingModel('fb', model, lora);
    const t = await timed(FB_REPS, () => backend.forwardBackward('fb', data, loss, {}, false));
    await backend.releaseTrainingModel('fb');
    const tokens = data.reduce((n, d) => n + d.tokens.length, 0);
    figures.push({ label, threads, tokens, ms: t.wall });
    console.log(`  forward_backward ${label.padEnd(58)} ${((tokens / t.wall) * 1000).toFixed(0).padStart(6)} tokens/s  (${t.wall.toFixed(0)} ms, CPU ${t.cpu.toFixed(0)} ms)`);
  };
  const gptBackend = new LocalBackend({ gemmThreads: threads });
  const gptModel = gptBackend.listBaseModels().some((m) => m.name === ARITH_MODEL) ? ARITH_MODEL : RANDOM_MODEL;
  await measure(gptBackend, gptModel, `${gptModel}, demo shapes (64 × 8, ≤ 6 new tokens)`, demoBatch(), 'importance_sampling');
  await measure(gptBackend, gptModel, `${gptModel}, 16 × 64-token sequences`, longBatch(16, 64), 'cross_entropy');
  await gptBackend.close();
  const served = new LocalBackend({ gemmThreads: threads });
  const hasChat = served.listBaseModels().some((m) => m.name === CHAT_MODEL);
  await served.close();
  const chatBackend = hasChat ? new LocalBackend({ gemmThreads: threads }) : new LocalBackend({ gemmThreads: threads, config: CHAT_STANDIN, weightsDir: '/nonexistent' });
  const chatModel = hasChat ? CHAT_MODEL : RANDOM_MODEL;
  const chatLabel = hasChat ? CHAT_MODEL : 'arith-chat shape (random, 4 × d160, 256 pos.)';
  await measure(chatBackend, chatModel, `${chatLabel}, demo shapes`, demoBatch(), 'importance_sampling');
  await measure(chatBackend, chatModel, `${chatLabel}, 16 × 256-token sequences`, longBatch(16, 256), 'cross_entropy');
  await chatBackend.close();
  return figures;
}

async function run(threads: 1 | 2): Promise<FbFigure[]> {
  const info = await initCompute({ threads, memoryMB: ENGINE_MEMORY_MB, log: () => undefined });
  if (process.env.ONLY === 'fb') {
    console.log(`forward_backward, GEMM: ${info.kernel}, ${info.threads} thread(s); load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    return forwardBackwardFigures(threads);
  }
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
  console.log(`forward_backward alone; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  return forwardBackwardFigures(threads);
}

async function main(): Promise<void> {
  const asked = process.env.THREADS;
  const figures = await run(asked === '2' ? 2 : 1);
  if (process.env.FB_RESULTS) fs.writeFileSync(process.env.FB_RESULTS, JSON.stringify(figures));
  if (asked === undefined) {
    // the kernel's thread count is fixed per process: measure 2 threads in a fresh one
    console.log('');
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'engine-bench-')), 'fb.json');
    spawnSync(process.execPath, [__filename], { stdio: 'inherit', env: { ...process.env, THREADS: '2', FB_RESULTS: file } });
    if (!fs.existsSync(file)) return;
    const two = JSON.parse(fs.readFileSync(file, 'utf8')) as FbFigure[];
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
    console.log(`\nforward_backward tokens/s, 1 and 2 GEMM/compute threads (load average now ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; on a busy machine the ratio understates)`);
    for (const f of figures) {
      const g = two.find((x) => x.label === f.label);
      const r1 = (f.tokens / f.ms) * 1000;
      const r2 = g ? (g.tokens / g.ms) * 1000 : NaN;
      console.log(`  ${f.label.padEnd(62)} ${r1.toFixed(0).padStart(6)}  ${r2.toFixed(0).padStart(6)}  ×${(r2 / r1).toFixed(2)}`);
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
