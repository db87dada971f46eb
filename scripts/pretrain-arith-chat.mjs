#!/usr/bin/env node
// Pretrains the embedded engine's chat model `tinker-studio/arith-chat` (3 layers, d=128, 256 rotary
// positions) from the random initialisation (seed 0; --init arith-gpt starts from arith-gpt's weights
// but its position rows instead, which RoPE disturbs more than it helps: see docs/engine.md),
// through the engine's own supervised path (LocalBackend.forwardBackward with cross_entropy + optimStep
// on a full-parameter training model) and writes src/engine/weights/arith-chat.tsw. Deterministic given
// --seed: a fixed --max-steps reproduces the file byte for byte, at --threads 1 or 2 alike (every
// result of the engine is the same at 1 and 2 compute threads). Not run in CI.
//
//   npm run build && npx tsc -p . && node scripts/pretrain-arith-chat.mjs [--seed 1] [--batch 32] [--lr 1.5e-3] [--warmup 100]
//        [--max-minutes 55] [--max-steps N] [--eval-every 150] [--eval-n 80] [--stop-at 0.3]
//        [--pause-at 0.6] [--resume-at 0.45] [--threads 2] [--init scratch|arith-gpt] [--out src/engine/weights]
//
// Data: the formats of src/core/data/arithChat.ts (single-turn sums with and without a system prompt,
// two- and three-turn chains, feedback turns, calculator tool use on three- and four-digit sums), drawn
// by its mixture from a seeded PRNG, rendered by the chatml renderer (renderArithEpisode — the same
// function the tests check), the loss on the trained assistant turns only. No addition in any training
// episode is a holdout pair (isArithHoldout). Every --eval-every steps the script samples each format on
// holdout episodes at temperature 1 and prints its accuracy and the tool-call parse rate; a format that
// reaches --pause-at leaves the mixture (it is not trained further) until it falls below --resume-at, so
// the quick formats are not over-trained while the slow ones catch up; the run stops at the first
// evaluation where every format reaches --stop-at (moderate accuracy, so that RL still has signal), or at
// --max-steps / --max-minutes. The evaluations happen at fixed steps and are seeded, so the mixture's
// changes, too, are the same in every run with the same arguments.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const out = (p) => require(path.join(root, 'out/src', p));
const { LocalBackend, WEIGHTS_MAGIC } = out('engine/model/backend.js');
const { RANDOM_MODEL, ARITH_CHAT_MODEL, CHAT_GPT, CHAT_WEIGHTS_FILE, WEIGHTS_FILE, findWeightsFile } = out('engine/model/models.js');
const { baseShapes, initBase } = out('engine/model/gptWeights.js');
const { readTensorFile } = out('engine/model/tensorFile.js');
const { initCompute } = out('engine/compute/index.js');
const { engineSampleTurn } = out('engine/model/arithChatTurns.js');
const { ChatmlRenderer } = out('core/render/chatml.js');
const { ByteTokenizer } = out('core/render/byteTokenizer.js');
const { mulberry32 } = out('core/data/prng.js');
const { ARITH_FORMATS, ARITH_MIXTURE, arithEpisode, drawArithFormat, isArithHoldout, renderArithEpisode } = out('core/data/arithChat.js');
const { arithEvalEpisodes, evaluateArithChat, arithEvalAccuracies } = out('core/evals/arithChatEval.js');

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const seed = Number(args.seed ?? 1);
const batch = Number(args.batch ?? 32);
const lr = Number(args.lr ?? 1.5e-3);
// linear warm-up: the first Adam steps move every weight by about lr, too much for a warm start
const warmup = Number(args.warmup ?? 100);
const maxMinutes = Number(args['max-minutes'] ?? 55);
// a fixed number of steps reproduces a shipped file exactly (the time limit depends on the machine)
const maxSteps = args['max-steps'] !== undefined ? Number(args['max-steps']) : Infinity;
const evalEvery = Number(args['eval-every'] ?? 150);
const evalN = Number(args['eval-n'] ?? 80);
const stopAt = Number(args['stop-at'] ?? 0.3);
// a format whose holdout accuracy (T=1) reaches --pause-at leaves the mixture until it falls below
// --resume-at, so that no format is over-trained while the slower ones catch up
const pauseAt = Number(args['pause-at'] ?? 0.6);
const resumeAt = Number(args['resume-at'] ?? 0.45);
const threads = Number(args.threads ?? 2);
const initFrom = args.init ?? 'scratch';
if (initFrom !== 'arith-gpt' && initFrom !== 'scratch') throw new Error(`--init ${initFrom}: expected arith-gpt or scratch`);
const outDir = path.resolve(root, args.out ?? 'src/engine/weights');

const renderer = new ChatmlRenderer(new ByteTokenizer());

await initCompute({ threads, memoryMB: 1024, log: (l) => console.log(l) });
// Warm start (--init arith-gpt): arith-gpt's weights (src/engine/weights/arith-gpt.tsw, itself made by
// pretrain-arith.mjs), all but its position rows: arith-chat's positions are rotations (GptConfig.rope),
// so what it learns at one position holds at every other. --init scratch: the random initialisation (seed 0).
if (!CHAT_GPT.rope) throw new Error('arith-chat is a rotary-position model (GptConfig.rope)');
const backend = new LocalBackend({ weightsDir: path.join(root, '.no-weights'), config: CHAT_GPT });
const init = initBase(CHAT_GPT, 0, (n) => new Float32Array(n));
if (initFrom === 'arith-gpt') {
  const gptFile = findWeightsFile(path.join(root, 'src/engine/weights'), WEIGHTS_FILE);
  if (!gptFile) throw new Error('src/engine/weights/arith-gpt.tsw is missing: arith-chat starts from it (or use --init scratch)');
  const gpt = readTensorFile(new Uint8Array(fs.readFileSync(gptFile)), WEIGHTS_MAGIC, gptFile);
  for (const [name] of baseShapes(CHAT_GPT)) init.set(name, Float32Array.from(gpt.tensors.get(name)));
}
backend.createFullTrainingModel('pretrain', RANDOM_MODEL, init);
const rand = mulberry32(seed);

function datum(episode) {
  for (const [x, y] of episode.sums) if (isArithHoldout(x, y)) throw new Error(`a training episode asks for the holdout pair ${x} + ${y}`);
  const { tokens, weights } = renderArithEpisode(renderer, episode);
  if (tokens.length - 1 > CHAT_GPT.ctx) throw new Error(`an episode of ${tokens.length} tokens does not fit ${CHAT_GPT.ctx} positions`);
  return {
    tokens: Int32Array.from(tokens.slice(0, -1)),
    lossFnInputs: {
      target_tokens: { dtype: 'int64', data: Float64Array.from(tokens.slice(1)), shape: [tokens.length - 1] },
      weights: { dtype: 'float32', data: Float32Array.from(weights.slice(1)), shape: [tokens.length - 1] },
    },
  };
}

// ---- evaluation: holdout episodes, sampled turn by turn, each request its own seed (src/core/evals/arithChatEval.ts) ----
const evalSets = arithEvalEpisodes(evalN, seed);

async function evaluate(temperature) {
  const state = backend.exportBaseWeights('pretrain', {});
  const tmp = path.join(root, `.pretrain-chat-eval-${process.pid}`);
  fs.mkdirSync(tmp, { recursive: true });
  fs.writeFileSync(path.join(tmp, CHAT_WEIGHTS_FILE), state);
  const evalBackend = new LocalBackend({ weightsDir: tmp });
  await evalBackend.createSampler('s', { baseModel: ARITH_CHAT_MODEL });
  const outcomes = await evaluateArithChat(renderer, evalSets, engineSampleTurn(evalBackend, 's', temperature), CHAT_GPT.ctx);
  fs.rmSync(tmp, { recursive: true, force: true });
  return arithEvalAccuracies(outcomes);
}

const pct = (v) => `${(100 * v).toFixed(1)}%`;
const show = (r) =>
  `single ${pct(r.single)} | single+system ${pct(r.single_system)} | chain2 follow-up ${pct(r.chain2)} (all turns ${pct(r.chain2_all_turns)}) | ` +
  `chain3 follow-ups ${pct(r.chain3)} (all turns ${pct(r.chain3_all_turns)}) | feedback 2nd attempt ${pct(r.feedback)} | ` +
  `tool 3-digit ${pct(r.tool3)} vs direct ${pct(r.tool3_direct)} (gain ${(100 * (r.tool3 - r.tool3_direct)).toFixed(1)} points), parse rate ${pct(r.tool3_parse_rate)} | ` +
  `tool 4-digit ${pct(r.tool4)} vs direct ${pct(r.tool4_direct)}, parse rate ${pct(r.tool4_parse_rate)}`;
const gated = (r) => [r.single, r.single_system, r.chain2, r.chain3, r.feedback, r.tool3, r.tool4];
/** a format's accuracy for the pause rule (tool: the better of three and four digits) */
const formatAccuracy = (r, f) => (f === 'tool' ? Math.max(r.tool3, r.tool4) : r[f]);
const mixture = { ...ARITH_MIXTURE };
/** the steps at which the mixture changed, and to what */
const schedule = [];

const t0 = Date.now();
let step = 0;
let tokensSeen = 0;
let last;
const adam = { learningRate: lr, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 };
console.log(
  `pretraining ${ARITH_CHAT_MODEL} (${JSON.stringify(CHAT_GPT)}): seed ${seed}, batch ${batch}, lr ${lr} (warm-up ${warmup} steps), mixture ${JSON.stringify(ARITH_MIXTURE)}; ` +
    `stops when every format reaches ${pct(stopAt)} holdout accuracy at temperature 1 (${evalN} episodes per format); a format leaves the mixture at ${pct(pauseAt)} and returns below ${pct(resumeAt)}`,
);
for (;;) {
  const data = [];
  while (data.length < batch) data.push(datum(arithEpisode(drawArithFormat(rand, mixture), rand, false)));
  const fb = await backend.forwardBackward('pretrain', data, 'cross_entropy', {}, false);
  await backend.optimStep('pretrain', { ...adam, learningRate: lr * Math.min(1, (step + 1) / warmup) });
  step++;
  tokensSeen += data.reduce((a, d) => a + d.tokens.length, 0);
  if (step % 10 === 0) {
    const answerTokens = data.reduce((a, d) => a + d.lossFnInputs.weights.data.reduce((s, w) => s + w, 0), 0);
    const secs = (Date.now() - t0) / 1000;
    console.log(`step ${step}  loss/trained-token ${(fb.metrics['loss:sum'] / answerTokens).toFixed(4)}  ${secs.toFixed(0)} s  ${(tokensSeen / secs).toFixed(0)} tokens/s`);
  }
  const outOfTime = Date.now() - t0 > maxMinutes * 60_000 || step >= maxSteps;
  if (step % evalEvery === 0 || outOfTime) {
    const te = Date.now();
    last = await evaluate(1);
    console.log(`step ${step}: holdout accuracy at temperature 1: ${show(last)}  (eval ${((Date.now() - te) / 1000).toFixed(0)} s)`);
    if (Math.min(...gated(last)) >= stopAt || outOfTime) break;
    let changed = false;
    for (const f of ARITH_FORMATS) {
      const a = formatAccuracy(last, f);
      const w = a >= pauseAt ? 0 : a < resumeAt ? ARITH_MIXTURE[f] : mixture[f];
      if (w !== mixture[f]) {
        mixture[f] = w;
        changed = true;
      }
    }
    // every format paused: back to the full mixture
    if (ARITH_FORMATS.every((f) => mixture[f] === 0)) Object.assign(mixture, ARITH_MIXTURE);
    if (changed) {
      schedule.push({ step, mixture: { ...mixture } });
      console.log(`step ${step}: mixture now ${JSON.stringify(mixture)}`);
    }
  }
}
const greedy = await evaluate(0);
console.log(`step ${step}: holdout accuracy greedy: ${show(greedy)}`);
const minutes = (Date.now() - t0) / 60_000;
const provenance =
  `Pretrained by scripts/pretrain-arith-chat.mjs (seed ${seed}, batch ${batch}, lr ${lr} after a ${warmup}-step linear warm-up, AdamW betas 0.9/0.95, grad clip 1) ` +
  `for ${step} steps (${(step * batch).toLocaleString('en')} arithmetic chats: single-turn sums with and without a system prompt, ` +
  `two- and three-turn chains, feedback turns, calculator tool use; holdout pairs excluded) ${initFrom === 'arith-gpt' ? "from arith-gpt's weights (arith-chat has no position rows: its positions are rotary)" : 'from the random initialisation (seed 0)'}; ` +
  `holdout accuracy at temperature 1: ${show(last)}.`;
const meta = { provenance, init: initFrom, seed, steps: step, batch, lr, warmup, evalEvery, evalN, pauseAt, resumeAt, mixture: ARITH_MIXTURE, mixtureSchedule: schedule, formats: ARITH_FORMATS, holdoutAccuracyT1: last, holdoutAccuracyGreedy: greedy };
const bytes = backend.exportBaseWeights('pretrain', meta);
fs.mkdirSync(outDir, { recursive: true });
fs.writeFileSync(path.join(outDir, CHAT_WEIGHTS_FILE), bytes);
console.log(`wrote ${path.join(outDir, CHAT_WEIGHTS_FILE)} (${(bytes.length / 1e6).toFixed(2)} MB) after ${step} steps, ${(tokensSeen / 1e6).toFixed(2)} M tokens, in ${minutes.toFixed(1)} min`);
console.log(provenance);
