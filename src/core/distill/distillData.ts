// Off-policy distillation data: a teacher (a base model or a tinker:// sampler checkpoint) answers a
// prompt set `n` times per prompt; the answers become chats for SFT (`{"messages": [...]}` lines, the
// format SFT specs read), each line carrying where it came from (`distilled`: teacher, sampling
// settings, sample index, reward), and a `<out>.provenance.json` beside the file with the whole
// recipe and the counts. With a reward file, only the samples it accepts (reward ≥ min_reward) are
// kept — rejection sampling. The file is written whole at the end (atomic): a cancel or a failure
// leaves any earlier file as it was.
import { renderedPrompt } from '../data/problem';
import * as path from 'node:path';
import { readJsonlProblems } from '../data/jsonl';
import type { Problem } from '../data/types';
import { writeFileAtomic } from '../fs/atomic';
import { loadRenderer } from '../render';
import type { Message } from '../render/types';
import { createRewardRunner } from '../reward';
import type { RewardRunner } from '../reward/types';
import type { ServiceClient } from '../tinker/client';
import type { NetworkOptions } from '../tinker/proxy';
import { textInput } from '../tinker/types';
import { stopParam } from '../rollouts/rollout';

export interface DistillDataOptions {
  /** a base model name or a tinker:// sampler path */
  teacher: string;
  /** JSONL prompts: `prompt_field` (default "question") or a `messages` chat list; `answer` is the reward's ground truth */
  prompts: string;
  /** the chats JSONL written */
  out: string;
  /** samples per prompt (default 1) */
  n?: number;
  /** keep only the samples this reward file scores at least `minReward` */
  reward?: string;
  minReward?: number;
  /** the teacher's base model when `teacher` is a tinker:// path (default: what the server says) */
  model?: string;
  renderer?: string;
  maxTokens?: number;
  temperature?: number;
  /** each request seeded from this and the prompt/sample index: the same command gives the same file (on the local engine) */
  seed?: number;
  promptField?: string;
  groundTruthField?: string;
  /** requests in flight (default 16) */
  concurrency?: number;
  connect: () => Promise<ServiceClient>;
  cacheDir: string;
  network?: NetworkOptions;
  python?: string;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
  log?: (line: string) => void;
}

export interface DistillDataResult {
  out: string;
  provenanceFile: string;
  prompts: number;
  sampled: number;
  kept: number;
  /** samples the reward file failed on (scored 0, so not kept) */
  rewardErrors: number;
}

/** What a chats line says about where it came from. */
export interface DistilledProvenance {
  teacher: string;
  base_model: string;
  renderer: string;
  temperature: number;
  max_tokens: number;
  seed?: number;
  problem_id: string;
  sample: number;
  reward?: number;
}

export class DistillDataError extends Error {}

/** A seed per (run seed, prompt index, sample index), spread so neighbours differ. */
function sampleSeed(seed: number, prompt: number, sample: number): number {
  let h = (seed ^ Math.imul(prompt + 1, 0x9e3779b1) ^ Math.imul(sample + 1, 0x85ebca6b)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
  return (h ^ (h >>> 15)) >>> 0;
}

async function pool<T>(items: readonly T[], limit: number, fn: (t: T, i: number) => Promise<void>, signal?: AbortSignal): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      signal?.throwIfAborted();
      const i = next++;
      await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export async function distillData(o: DistillDataOptions): Promise<DistillDataResult> {
  const log = o.log ?? (() => undefined);
  const n = o.n ?? 1;
  if (!Number.isInteger(n) || n < 1) throw new DistillDataError(`--n must be a whole number ≥ 1 (got ${n})`);
  const temperature = o.temperature ?? 1;
  const maxTokens = o.maxTokens ?? 256;
  const minReward = o.minReward ?? 0.5;
  const prompts = path.resolve(o.prompts);
  const fields = { promptField: o.promptField ?? 'question', groundTruthField: o.groundTruthField ?? 'answer', groundTruthOptional: o.reward === undefined };
  const { problems, skipped } = await readJsonlProblems(prompts, path.basename(prompts), fields, 'stop');
  if (skipped.length) log(`${skipped.length} prompt lines skipped`);
  if (problems.length === 0) throw new DistillDataError(`${prompts}: no prompts`);

  let reward: RewardRunner | undefined;
  const service = await o.connect();
  try {
    let model = o.model;
    if (o.teacher.startsWith('tinker://')) model ??= (await service.weightsInfo(o.teacher, o.signal)).base_model;
    else model = o.teacher;
    const { renderer, warnings } = await loadRenderer({ model, ...(o.renderer ? { renderer: o.renderer } : {}), cacheDir: o.cacheDir, ...(o.network ? { network: o.network } : {}) });
    for (const w of warnings) log(`warning: ${w}`);
    if (o.reward) reward = await createRewardRunner({ file: path.resolve(o.reward), ...(o.python ? { python: o.python } : {}) });
    const sampler = await service.createSamplingClient(o.teacher.startsWith('tinker://') ? { modelPath: o.teacher } : { baseModel: o.teacher }, o.signal);
    const stop = stopParam(renderer.stopSequences());
    log(`sampling ${o.teacher} (${model}, renderer ${renderer.name}): ${problems.length} prompts × ${n}, temperature ${temperature}, max_tokens ${maxTokens}`);

    const total = problems.length * n;
    let done = 0;
    const answers: Array<Array<{ content: string }>> = problems.map(() => []);
    await pool(
      problems,
      o.concurrency ?? 16,
      async (p: Problem, i) => {
        const prompt = renderedPrompt(renderer, p);
        const params = { max_tokens: maxTokens, temperature, stop, ...(o.seed !== undefined ? { seed: sampleSeed(o.seed, i, 0) } : {}) };
        const r = await sampler.sample(textInput(prompt), params, { numSamples: n, ...(o.signal ? { signal: o.signal } : {}) });
        answers[i] = r.sequences.map((s) => ({ content: renderer.parseResponse(s.tokens).message.content }));
        done += r.sequences.length;
        o.onProgress?.(done, total);
      },
      o.signal,
    );

    const cases = problems.flatMap((p, i) => answers[i]!.map((a) => ({ completion: a.content, groundTruth: p.groundTruth })));
    const outcomes = reward ? await reward.score(cases, o.signal) : undefined;
    const lines: string[] = [];
    let k = 0;
    let rewardErrors = 0;
    problems.forEach((p, i) =>
      answers[i]!.forEach((a, j) => {
        const outcome = outcomes?.[k++];
        if (outcome && !outcome.ok) rewardErrors++;
        if (outcome && !(outcome.ok && outcome.reward >= minReward)) return;
        const provenance: DistilledProvenance = {
          teacher: o.teacher,
          base_model: model,
          renderer: renderer.name,
          temperature,
          max_tokens: maxTokens,
          ...(o.seed !== undefined ? { seed: o.seed } : {}),
          problem_id: p.id,
          sample: j,
          ...(outcome ? { reward: outcome.reward } : {}),
        };
        const messages: Message[] = [...p.messages, { role: 'assistant', content: a.content }];
        lines.push(JSON.stringify({ messages, distilled: provenance }));
      }),
    );
    o.signal?.throwIfAborted();
    const out = path.resolve(o.out);
    const provenanceFile = `${out.replace(/\.jsonl$/i, '')}.provenance.json`;
    await writeFileAtomic(out, lines.length ? `${lines.join('\n')}\n` : '');
    const result: DistillDataResult = { out, provenanceFile, prompts: problems.length, sampled: total, kept: lines.length, rewardErrors };
    await writeFileAtomic(
      provenanceFile,
      `${JSON.stringify(
        {
          kind: 'tinker-studio distill-data',
          created_at: new Date().toISOString(),
          teacher: o.teacher,
          base_model: model,
          renderer: renderer.name,
          sampling: { n, temperature, max_tokens: maxTokens, stop, ...(o.seed !== undefined ? { seed: o.seed } : {}) },
          prompts,
          ...(o.reward ? { reward: { file: path.resolve(o.reward), min_reward: minReward } } : {}),
          counts: { prompts: result.prompts, sampled: result.sampled, kept: result.kept, reward_errors: rewardErrors },
        },
        null,
        2,
      )}\n`,
    );
    log(`${result.kept} of ${result.sampled} samples kept → ${out}`);
    return result;
  } finally {
    await reward?.close().catch(() => undefined);
    service.close();
  }
}
