#!/usr/bin/env node
// Pretrains the embedded engine's arithmetic model through the engine's own supervised path
// (LocalBackend.forwardBackward with cross_entropy + optimStep, on a full-parameter training model)
// and writes src/engine/weights/arith-gpt.tsw. Deterministic given --seed.
//
//   npm run build && npx tsc -p . && node scripts/pretrain-arith.mjs [--seed 1] [--batch 32] [--lr 2e-3]
//        [--max-minutes 25] [--max-steps N] [--eval-every 100] [--stop-at 0.35] [--threads 1] [--out src/engine/weights]
//
// Data: "What is x + y?" with x, y drawn uniformly from 0..99 by a seeded PRNG, in the chat layout the
// model declares (chatml); the loss is on the answer and its <|im_end|> only. The holdout pairs
// (isArithHoldout: 10 % of the pairs, picked by a hash) are never trained on. Training stops early, as soon as the
// holdout accuracy at temperature 1 reaches --stop-at, so that GRPO has signal to work with (the
// model is right often, but far from always).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { LocalBackend } = require(path.join(root, 'out/src/engine/model/backend.js'));
const { Rng } = require(path.join(root, 'out/src/engine/model/gptWeights.js'));
const { RANDOM_MODEL, encodeChat, decodeBytes, isArithHoldout } = require(path.join(root, 'out/src/engine/model/models.js'));

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const seed = Number(args.seed ?? 1);
const batch = Number(args.batch ?? 32);
const lr = Number(args.lr ?? 2e-3);
const maxMinutes = Number(args['max-minutes'] ?? 25);
// a fixed number of steps reproduces a shipped file exactly (the time limit depends on the machine)
const maxSteps = args['max-steps'] !== undefined ? Number(args['max-steps']) : Infinity;
const evalEvery = Number(args['eval-every'] ?? 100);
const stopAt = Number(args['stop-at'] ?? 0.35);
const outDir = path.resolve(root, args.out ?? 'src/engine/weights');

export const prompt = (x, y) => `<|im_start|>user\nWhat is ${x} + ${y}?<|im_end|>\n<|im_start|>assistant\n`;
const isHoldout = isArithHoldout; // 10 % of the pairs, picked by a hash (models.ts)
const holdout = [];
for (let x = 0; x < 100; x++) for (let y = 0; y < 100; y++) if (isHoldout(x, y)) holdout.push([x, y]);
const evalSet = holdout.filter((_, i) => i % 10 === 0); // 100 holdout problems

const { initCompute } = require(path.join(root, 'out/src/engine/compute/index.js'));
await initCompute({ threads: Number(args.threads ?? 1), log: (l) => console.log(l) });
const backend = new LocalBackend({ weightsDir: path.join(root, '.no-weights') });
backend.createFullTrainingModel('pretrain', RANDOM_MODEL);
const rng = new Rng(seed);
const IM_END = 258;

function datum(x, y) {
  const p = encodeChat(prompt(x, y));
  const a = [...new TextEncoder().encode(String(x + y)), IM_END];
  const full = [...p, ...a];
  const weights = full.slice(1).map((_, i) => (i + 1 >= p.length ? 1 : 0));
  return { tokens: Int32Array.from(full.slice(0, -1)), lossFnInputs: { target_tokens: { dtype: 'int64', data: Float64Array.from(full.slice(1)), shape: [full.length - 1] }, weights: { dtype: 'float32', data: Float32Array.from(weights), shape: [weights.length] } } };
}

async function accuracy(temperature) {
  const state = await backend.exportBaseWeights('pretrain', {});
  const tmp = path.join(root, '.pretrain-eval');
  fs.mkdirSync(tmp, { recursive: true });
  fs.writeFileSync(path.join(tmp, 'arith-gpt.tsw'), state);
  const evalBackend = new LocalBackend({ weightsDir: tmp });
  await evalBackend.createSampler('s', { baseModel: 'tinker-studio/arith-gpt' });
  let correct = 0;
  for (const [i, [x, y]] of evalSet.entries()) {
    const r = await evalBackend.sample('s', { prompt: Int32Array.from(encodeChat(prompt(x, y))), numSamples: 1, params: { maxTokens: 6, temperature, topP: 1, topK: -1, stopStrings: [], stopTokens: [IM_END], seed: 1000 + i }, promptLogprobs: false, topkPromptLogprobs: 0 });
    const text = decodeBytes(r.sequences[0].tokens).replace('<|im_end|>', '').trim();
    if (text === String(x + y)) correct++;
  }
  return correct / evalSet.length;
}

const t0 = Date.now();
let step = 0;
let acc1 = 0;
let accGreedy = 0;
const adam = { learningRate: lr, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 };
console.log(`pretraining ${RANDOM_MODEL} architecture on addition: seed ${seed}, batch ${batch}, lr ${lr}, stop at ${stopAt} holdout accuracy (T=1)`);
for (;;) {
  const data = [];
  while (data.length < batch) {
    const x = Math.floor(rng.next() * 100);
    const y = Math.floor(rng.next() * 100);
    if (!isHoldout(x, y)) data.push(datum(x, y));
  }
  const fb = await backend.forwardBackward('pretrain', data, 'cross_entropy', {}, false);
  await backend.optimStep('pretrain', adam);
  step++;
  if (step % 10 === 0) {
    const answerTokens = data.reduce((a, d) => a + d.lossFnInputs.weights.data.reduce((s, w) => s + w, 0), 0);
    console.log(`step ${step}  loss/answer-token ${(fb.metrics['loss:sum'] / answerTokens).toFixed(4)}  ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
  const outOfTime = Date.now() - t0 > maxMinutes * 60_000 || step >= maxSteps;
  if (step % evalEvery === 0 || outOfTime) {
    acc1 = await accuracy(1);
    console.log(`step ${step}: holdout accuracy ${(100 * acc1).toFixed(1)}% at temperature 1 (${evalSet.length} problems)`);
    if (acc1 >= stopAt || outOfTime) {
      accGreedy = await accuracy(0);
      console.log(`step ${step}: holdout accuracy ${(100 * accGreedy).toFixed(1)}% greedy`);
      break;
    }
  }
}
const minutes = (Date.now() - t0) / 60_000;
const provenance =
  `Pretrained by scripts/pretrain-arith.mjs (seed ${seed}, batch ${batch}, lr ${lr}, AdamW betas 0.9/0.95, grad clip 1) ` +
  `for ${step} steps (${(step * batch).toLocaleString('en')} addition problems "What is x + y?", x, y in 0..99, holdout pairs excluded) ` +
  `from the random-gpt initialisation; holdout accuracy ${(100 * acc1).toFixed(1)}% at temperature 1, ${(100 * accGreedy).toFixed(1)}% greedy.`;
const bytes = await backend.exportBaseWeights('pretrain', { provenance, seed, steps: step, batch, lr, holdoutAccuracyT1: acc1, holdoutAccuracyGreedy: accGreedy });
fs.mkdirSync(outDir, { recursive: true });
fs.writeFileSync(path.join(outDir, 'arith-gpt.tsw'), bytes);
fs.rmSync(path.join(root, '.pretrain-eval'), { recursive: true, force: true });
console.log(`wrote ${path.join(outDir, 'arith-gpt.tsw')} (${(bytes.length / 1e6).toFixed(2)} MB) after ${step} steps in ${minutes.toFixed(1)} min`);
console.log(provenance);
