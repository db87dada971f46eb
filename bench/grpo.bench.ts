// GRPO on the arithmetic task through the project's own Tinker client against the embedded engine
// (in this process, compute in a worker): holdout accuracy before and after, per-iteration reward,
// no-signal breakdown, sample/train KL and seconds per iteration. Prints figures; asserts nothing.
//   BENCH=grpo node scripts/bench.mjs       ITERS=100 LR=2e-3 GRPO_GROUPS=64 GROUP_SIZE=8
// The defaults are the README demo's configuration (examples/arithmetic/arith.grpo.json).
// (GRPO_GROUPS, not GROUPS: bash reserves GROUPS.)
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { computeAdvantages, groupBreakdown } from '../src/core/rollouts/advantages';
import { sampleTrainKl, trajectoryToDatum } from '../src/core/rollouts/datums';
import { toWireDatum } from '../src/core/grpo/trainStep';
import { COOKBOOK_ADAM } from '../src/core/tinker/adam';
import { SamplingClient, ServiceClient } from '../src/core/tinker/client';
import { textInput } from '../src/core/tinker/types';
import { createComputeBackend } from '../src/engine/model';
import { ARITH_MODEL, RANDOM_MODEL, decodeBytes, encodeChat, isArithHoldout } from '../src/engine/model/models';
import { startEngineServer } from '../src/engine/server';

const ITERS = Number(process.env.ITERS ?? 100);
const LR = Number(process.env.LR ?? 2e-3);
const GROUPS = Number(process.env.GRPO_GROUPS ?? 64);
const GROUP_SIZE = Number(process.env.GROUP_SIZE ?? 8);
const IM_END = 258;

const prompt = (x: number, y: number) => `<|im_start|>user\nWhat is ${x} + ${y}?<|im_end|>\n<|im_start|>assistant\n`;
const isHoldout = isArithHoldout; // never seen in pretraining
const reward = (tokens: number[], x: number, y: number): number => (decodeBytes(tokens).replace('<|im_end|>', '').trim() === String(x + y) ? 1 : 0);

async function accuracy(s: SamplingClient, problems: Array<[number, number]>, temperature = 1): Promise<number> {
  const rewards = await Promise.all(
    problems.map(async ([x, y], i) => {
      const r = await s.sample(textInput(encodeChat(prompt(x, y))), { max_tokens: 6, temperature, stop: [IM_END], seed: 5000 + i });
      return reward(r.sequences[0]!.tokens, x, y);
    }),
  );
  return rewards.reduce((a, b) => a + b, 0) / problems.length;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-grpo-bench-'));
  const backend = await createComputeBackend({ inWorker: true, gemmThreads: 1 });
  const model = backend.listBaseModels().some((m) => m.name === ARITH_MODEL) ? ARITH_MODEL : RANDOM_MODEL;
  const server = await startEngineServer({ dataDir: dir, backend });
  const client = await ServiceClient.connect({ baseUrl: server.url, clientVersion: 'bench' });
  try {
    const holdout: Array<[number, number]> = [];
    for (let x = 0; x < 100; x++) for (let y = 0; y < 100; y++) if (isHoldout(x, y)) holdout.push([x, y]);
    const evalSet = holdout; // all 1,029 pairs: the before/after difference needs the smaller standard error
    const tc = await client.createLoraTrainingClient(model, { rank: 8, seed: 1 });
    let sampler = await tc.saveWeightsAndGetSamplingClient();
    const before = await accuracy(sampler, evalSet);
    const beforeGreedy = await accuracy(sampler, evalSet, 0);
    console.log(`GRPO on addition: ${model}, LoRA rank 8, lr ${LR}, ${GROUPS} groups × ${GROUP_SIZE} samples, ${ITERS} iterations, importance_sampling`);
    console.log('iter  reward  frac_mixed  all_good  all_bad  kl_v1       entropy  seconds');
    let seed = 12345;
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const seconds: number[] = [];
    const rewards: number[] = [];
    for (let it = 0; it < ITERS; it++) {
      const t0 = Date.now();
      const problems: Array<[number, number]> = [];
      while (problems.length < GROUPS) {
        const x = Math.floor(rnd() * 100);
        const y = Math.floor(rnd() * 100);
        if (!isHoldout(x, y)) problems.push([x, y]);
      }
      const s = sampler;
      const groups = await Promise.all(
        problems.map(async ([x, y]) => {
          const p = encodeChat(prompt(x, y));
          const r = await s.sample(textInput(p), { max_tokens: 6, temperature: 1, stop: [IM_END] }, { numSamples: GROUP_SIZE });
          return { p, seqs: r.sequences, rewards: r.sequences.map((q) => reward(q.tokens, x, y)) };
        }),
      );
      const adv = computeAdvantages(groups.map((g) => g.rewards));
      const datums = groups.flatMap((g, gi) => g.seqs.map((q, si) => trajectoryToDatum(g.p, q.tokens, q.logprobs ?? [], adv[gi]![si]!)));
      const fb = await tc.forwardBackward(datums.map(toWireDatum), 'importance_sampling');
      const opt = await tc.optimStep({ learning_rate: LR, ...COOKBOOK_ADAM });
      const out = await fb.result();
      await opt.result();
      const kl = sampleTrainKl(datums, out.loss_fn_outputs.map((o) => o.logprobs!.data));
      sampler = await tc.saveWeightsAndGetSamplingClient();
      const all = groups.flatMap((g) => g.rewards);
      const mean = all.reduce((a, b) => a + b, 0) / all.length;
      const bg = groupBreakdown(groups.map((g) => g.rewards));
      const sec = (Date.now() - t0) / 1000;
      seconds.push(sec);
      rewards.push(mean);
      console.log(
        `${String(it).padStart(4)}  ${mean.toFixed(3)}   ${bg.frac_mixed.toFixed(2)}        ${bg.frac_all_good.toFixed(2)}      ${bg.frac_all_bad.toFixed(2)}     ${kl.kl_sample_train_v1.toExponential(2).padEnd(10)}  ${kl.entropy.toFixed(3)}    ${sec.toFixed(1)}`,
      );
    }
    const after = await accuracy(sampler, evalSet);
    const afterGreedy = await accuracy(sampler, evalSet, 0);
    const avg = (a: number[]) => a.reduce((x, y) => x + y, 0) / Math.max(1, a.length);
    console.log('');
    console.log('                          before   after');
    console.log(`holdout accuracy (T=1)    ${(100 * before).toFixed(1).padStart(5)}%  ${(100 * after).toFixed(1).padStart(5)}%   (${evalSet.length} problems never trained on)`);
    console.log(`holdout accuracy (greedy)  ${(100 * beforeGreedy).toFixed(1).padStart(5)}%  ${(100 * afterGreedy).toFixed(1).padStart(5)}%`);
    console.log(`train reward, 5-iter mean ${avg(rewards.slice(0, 5)).toFixed(3).padStart(6)}  ${avg(rewards.slice(-5)).toFixed(3).padStart(6)}`);
    console.log(`seconds per iteration     ${avg(seconds).toFixed(2)} (${GROUPS * GROUP_SIZE} samples + one forward_backward/optim_step + a fresh sampler)`);
  } finally {
    client.close();
    await server.close();
    await backend.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

void main();
