// The session's `sample` tool: completions of given prompts from the live run's current weights (or a
// sampler checkpoint), scored when the run has a reward function and a prompt has a ground truth.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import { renderedPrompt } from '../data/problem';
import type { Problem } from '../data/types';
import { errorMessage } from '../errors';
import { sampleGroup, scoreGroups, stopParam } from '../rollouts/rollout';
import type { SamplingClient } from '../tinker/client';
import { addUsage, emptyUsage, UsageMeter } from '../tinker/usage';
import { SessionError, type Current, type Held, type SamplePrompt } from './sessionTypes';

/** max_tokens when the kind's spec sets none (SFT, DPO); the local engine's models see 64 tokens */
const DEFAULT_SAMPLE_MAX_TOKENS = 64;

export interface SampleArgs {
  prompts?: SamplePrompt[];
  prompts_file?: string;
  n?: number;
  temperature?: number;
  max_tokens?: number;
  checkpoint?: string;
}

/** The prompts of a sample call, checked before anything connects. */
export function samplePrompts(a: SampleArgs, baseDir: string): SamplePrompt[] {
  const prompts = [...(a.prompts ?? []), ...(a.prompts_file ? readPromptsFile(path.resolve(baseDir, a.prompts_file)) : [])];
  if (prompts.length === 0) throw new SessionError('give prompts (a list) or prompts_file (JSONL with "prompt" or "messages", and optionally "ground_truth")');
  if (a.checkpoint !== undefined && !a.checkpoint.startsWith('tinker://')) throw new SessionError(`checkpoint must be a tinker:// sampler path (got "${a.checkpoint}")`);
  return prompts;
}

/** Samples `n` completions of each prompt on the live run `h` of the session `c`. */
export async function sampleLive(c: Current, h: Held, prompts: SamplePrompt[], a: SampleArgs, note: string, signal?: AbortSignal) {
  const n = a.n ?? 4;
  const renderer = h.renderer;
  const sampler: SamplingClient = a.checkpoint ? await h.run.service.createSamplingClient({ modelPath: a.checkpoint }, signal) : await h.run.currentSampler(signal);
  const problems: Problem[] = prompts.map((p, i) => ({
    id: `prompt:${i}`,
    messages: p.messages ?? [{ role: 'user', content: p.prompt ?? '' }],
    groundTruth: p.ground_truth ?? '',
  }));
  const own = c.kind.agent.sampling?.(c.spec);
  const params = {
    max_tokens: a.max_tokens ?? own?.maxTokens ?? DEFAULT_SAMPLE_MAX_TOKENS,
    temperature: a.temperature ?? own?.temperature ?? 1,
    stop: own?.stop ?? stopParam(renderer.stopSequences()),
  };
  // the agent's own samples are not a training step's: counted apart from the run's usage/* rows (so a
  // session's metrics equal a CLI run's) and reported with the samples; the session's calls never overlap
  const meter = new UsageMeter();
  const runMeter = sampler.usage;
  sampler.usage = meter;
  let groups: Awaited<ReturnType<typeof sampleGroup>>[];
  try {
    groups = await Promise.all(problems.map((p) => sampleGroup(sampler, renderer, p, renderedPrompt(renderer, p), n, params, signal)));
  } finally {
    sampler.usage = runMeter;
  }
  const usage = emptyUsage();
  for (const u of meter.total().values()) addUsage(usage, u);
  // a run without a reward function (SFT, DPO): its samples are shown unscored
  const scorable = h.reward !== undefined && prompts.some((p) => p.ground_truth !== undefined);
  let rewards: (number | null)[][] = groups.map((g) => g.rollouts.map(() => null));
  const errors: string[] = [];
  if (scorable) {
    const scored = await scoreGroups(groups, h.reward!, signal);
    rewards = scored.map((g, gi) => g.rollouts.map((r) => (prompts[gi]!.ground_truth === undefined ? null : r.reward)));
    for (const g of scored) for (const r of g.rollouts) if (r.rewardError && errors.length < 3) errors.push(`${r.rewardError.kind}: ${r.rewardError.message}`);
  }
  const value = {
    source: a.checkpoint ?? `current weights after ${c.step} ${c.kind.row.unit.many}`,
    results: groups.map((g, gi) => ({
      prompt: prompts[gi]!.prompt ?? g.problem.messages[g.problem.messages.length - 1]?.content ?? '',
      ground_truth: prompts[gi]!.ground_truth ?? null,
      completions: g.rollouts.map((r, k) => ({ text: r.response.message.content, reward: rewards[gi]![k]!, stop_reason: r.stopReason, tokens: r.tokens.length })),
    })),
    reward_errors: errors,
    /** the tokens these samples were billed for (prefill, cached prefill, sampled) */
    usage,
  };
  const lines = [`${note}${n} sample(s) of ${prompts.length} prompt(s) from ${value.source}`];
  for (const r of value.results) {
    const rs = r.completions.map((x) => x.reward).filter((v): v is number => v !== null);
    lines.push(`- ${JSON.stringify(clip(r.prompt, 80))}${rs.length ? ` mean reward ${(rs.reduce((s, v) => s + v, 0) / rs.length).toFixed(3)}` : ''}: ${r.completions.slice(0, 3).map((x) => JSON.stringify(clip(x.text, 80))).join(', ')}${r.completions.length > 3 ? ', …' : ''}`);
  }
  if (errors.length) lines.push(`reward errors: ${errors.join(' | ')}`);
  if (own?.unscored) lines.push(own.unscored);
  return { text: lines.join('\n'), value };
}

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

function readPromptsFile(file: string): SamplePrompt[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new SessionError(`prompts_file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const out: SamplePrompt[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (err) {
      throw new SessionError(`${file}:${i + 1}: not JSON (${errorMessage(err)})`);
    }
    const p = SamplePromptSchema.safeParse(v);
    if (!p.success) throw new SessionError(`${file}:${i + 1}: ${p.error.issues.map((x) => `${x.path.join('.') || '(line)'}: ${x.message}`).join('; ')}`);
    out.push(p.data);
  });
  return out;
}

export const SamplePromptSchema = z
  .object({
    prompt: z.string().optional(),
    messages: z.array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() })).optional(),
    ground_truth: z.string().optional(),
  })
  .refine((p) => (p.prompt === undefined) !== (p.messages === undefined), { message: 'give exactly one of "prompt" or "messages"' });
