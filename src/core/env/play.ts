// One episode of an environment played outside a run, to debug the env before spending compute:
// "Play as the Model" (a person types each assistant reply) and "Dry Run Episode" (the model
// samples them). Both go through the loop's own runEpisode (episode.ts) with the run's rules (parse
// failures, context overflow, max_turns, env errors), in the same hardened worker pool; only the
// policy differs. A typed reply is encoded as the model would have emitted it (special-token text,
// e.g. qwen3's <tool_call>, becomes the special token) and ends on the renderer's stop sequence, so
// the renderer parses it exactly as it parses a sample: tool calls in the renderer's format become
// `tool_calls`, a malformed one a parse failure.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { ChatMessage } from '../../protocol/chatMessage';
import type { EnvPlayView } from '../../protocol/envPlayProtocol';
import type { EnvSpec } from './spec';
import { episodeLimits } from './spec';
import type { Renderer } from '../render/types';
import type { SamplingClient } from '../tinker/client';
import type { SampleResponse, SamplingParams } from '../tinker/types';
import { runEpisode, startsWith, type Episode, type EpisodeLimits } from './episode';
import type { EnvRunner } from './runner';

/** The limits a spec's `env` gives an episode (the loop's and the dry run's), with the run's max_tokens. */
export function envLimitsOf(env: EnvSpec, maxTokens: number): EpisodeLimits {
  return { ...episodeLimits(env), maxTokens };
}

/** The ids of a typed reply as the model would have sampled them: the text, then the renderer's stop sequence. */
export function typedReplyTokens(renderer: Renderer, text: string): number[] {
  const stop = renderer.stopSequences();
  const tail = stop.kind === 'tokens' ? stop.tokens.slice(0, 1) : renderer.tokenizer.encode(stop.strings[0] ?? '');
  return [...renderer.tokenizer.encodeWithSpecialTokens(text), ...tail];
}

/** A policy whose replies a person types: `sample` waits until `reply(text)` is called. */
export class TypedReplies implements Pick<SamplingClient, 'sample'> {
  private waiting: { resolve(r: SampleResponse): void; reject(err: unknown): void } | undefined;

  constructor(private readonly renderer: Renderer) {}

  get awaiting(): boolean {
    return this.waiting !== undefined;
  }

  sample(_prompt: unknown, _params: unknown, o: { signal?: AbortSignal | undefined } = {}): Promise<SampleResponse> {
    return new Promise((resolve, reject) => {
      const signal = o.signal;
      if (signal?.aborted) return reject(signal.reason ?? new Error('cancelled'));
      const abort = () => {
        this.waiting = undefined;
        reject(signal?.reason ?? new Error('cancelled'));
      };
      signal?.addEventListener('abort', abort, { once: true });
      this.waiting = {
        resolve: (r) => {
          signal?.removeEventListener('abort', abort);
          resolve(r);
        },
        reject,
      };
    });
  }

  /** Hands the episode the person's reply (throws when no reply is awaited). */
  reply(text: string): void {
    const w = this.waiting;
    if (!w) throw new Error('the environment is not waiting for a reply');
    this.waiting = undefined;
    const tokens = typedReplyTokens(this.renderer, text);
    // no log-probs exist for a typed reply; the episode needs one per token, and nothing trains on them
    w.resolve({ sequences: [{ stop_reason: 'stop', tokens, logprobs: tokens.map(() => 0) }] });
  }
}

export interface PlayEpisodeOptions {
  env: EnvRunner;
  /** the dataset line the env's class is constructed from */
  problem: unknown;
  renderer: Renderer;
  /** the model's sampling client, or TypedReplies */
  policy: Pick<SamplingClient, 'sample'>;
  params: SamplingParams;
  limits: EpisodeLimits;
  /** the view, each time it changes (a new observation awaits a reply, the episode ended) */
  onUpdate(view: EnvPlayView): void;
  /** what the view says about the episode (file, player, model) */
  view: Pick<EnvPlayView, 'id' | 'player' | 'envFile' | 'className' | 'renderer' | 'problem'> & { model?: string };
  signal?: AbortSignal;
}

const total = (v: Pick<EnvPlayView, 'turns' | 'group'>) => v.turns.reduce((s, t) => s + t.reward, 0) + (v.group && 'reward' in v.group ? v.group.reward : 0);

/** Plays one episode, telling `onUpdate` what the player sees; resolves with the episode (rejects when cancelled). */
export async function playEpisode(o: PlayEpisodeOptions): Promise<{ episode: Episode; view: EnvPlayView }> {
  const view: EnvPlayView = { ...o.view, turns: [], status: 'starting', total: 0 };
  const emit = () => o.onUpdate(structuredClone(view));
  emit();
  let lastConversation: readonly ChatMessage[] = [];
  let episode: Episode;
  try {
    episode = await runEpisode(o.env, o.problem, o.policy, o.renderer, o.params, o.limits, o.signal, {
      onObservation: ({ conversation, newMessages, reset, turns, tools }) => {
        lastConversation = conversation;
        view.turns = [...turns];
        view.pending = { messages: [...newMessages], ...(reset ? { reset: true } : {}) };
        if (tools?.length) view.tools = [...tools];
        view.status = 'awaiting';
        view.total = total(view);
        emit();
      },
    });
  } catch (err) {
    view.status = o.signal?.aborted ? 'cancelled' : 'failed';
    if (!o.signal?.aborted) view.error = { where: 'episode', kind: 'crash', message: err instanceof Error ? err.message : String(err) };
    delete view.pending;
    emit();
    throw err;
  }
  view.turns = episode.turns;
  if (episode.tools?.length) view.tools = episode.tools;
  delete view.pending;
  // messages the env added after the last reply (an episode ended by max_turns): shown, never answered
  const last = episode.turns.at(-1);
  if (last && episode.stop === 'max_turns') {
    const prefix = [...lastConversation, last.reply];
    const trailing = startsWith(episode.messages, prefix) ? episode.messages.slice(prefix.length) : [];
    if (trailing.length) view.trailing = trailing;
  }
  if (episode.stop === 'env_error' && episode.error) {
    const e = episode.error;
    view.error = { where: e.where, kind: e.kind, message: e.message, ...(e.traceback ? { traceback: e.traceback } : {}), ...(e.line ? { line: e.line } : {}) };
  } else if (o.env.hasGroupRewards) {
    const g = await o.env.groupRewards([o.problem], [episode.messages]);
    view.group = g.ok ? { reward: g.value[0]!.reward, metrics: g.value[0]!.metrics } : { error: g.error.message };
  }
  view.stop = episode.stop;
  view.status = 'done';
  view.total = total(view);
  emit();
  return { episode, view };
}

/** The dataset line a typed problem gives the env: its JSON value, or the text itself when it is not JSON. */
export function typedProblem(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Line `line` (1-based) of a JSONL text, parsed; throws naming the line when it is blank, missing or not JSON. */
export function datasetLine(text: string, line: number, name: string): unknown {
  const lines = text.split(/\r?\n/);
  const raw = lines[line - 1];
  if (raw === undefined || raw.trim() === '') throw new Error(`${name} has no line ${line} (it has ${lines.filter((l) => l.trim()).length} lines)`);
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw new Error(`${name}:${line} is not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
}

/** The spec's dataset as a local JSONL file (absolute), when it is one (a Hugging Face dataset is not). */
export function specDatasetFile(spec: { dataset?: { path?: string | undefined } | undefined }, specFile: string): string | undefined {
  const p = spec.dataset?.path;
  return p ? path.resolve(path.dirname(specFile), p) : undefined;
}

/** The first `n` lines of a JSONL text that parse, with where they came from ("train.jsonl:1"). */
export function firstDatasetLines(text: string, name: string, n: number): Array<{ problem: unknown; source: string }> {
  const out: Array<{ problem: unknown; source: string }> = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length && out.length < n; i++) {
    if (!lines[i]!.trim()) continue;
    try {
      out.push({ problem: JSON.parse(lines[i]!), source: `${name}:${i + 1}` });
    } catch {
      // a line that is not JSON is the dataset's problem, reported by the run spec's checks
    }
  }
  return out;
}

/** A JSONL file beside an env file (train*.jsonl first, then by name), for an env no run spec names. */
export async function datasetBeside(envFile: string): Promise<string | undefined> {
  const dir = path.dirname(envFile);
  const names = (await fs.readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.jsonl') && !f.endsWith('.examples.jsonl'));
  names.sort((a, b) => Number(b.startsWith('train')) - Number(a.startsWith('train')) || a.localeCompare(b));
  return names[0] ? path.join(dir, names[0]) : undefined;
}
