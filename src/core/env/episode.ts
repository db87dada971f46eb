// One episode of an environment with the run's sampler and renderer: the cookbook's
// EnvFromMessageEnv + do_single_rollout, at the message level. Each turn renders the conversation
// (the tool prefix from createConversationPrefixWithTools when the env declares tools), samples with
// the renderer's stop condition, parses the reply with the renderer (content, tool_calls, thinking)
// and hands it to step(). The cookbook's defaults, configurable in the spec (EnvSpec):
//  - a reply that does not parse (malformed, or a tool call that does not parse) scores
//    failed_parse_reward and ends the episode (terminate_on_parse_error);
//  - a reply cut off at max_tokens, or a next observation that with max_tokens would pass
//    max_trajectory_tokens, ends it with context_overflow_reward; max_trajectory_tokens is capped by
//    the model's context length as the service reports it (the sampling client's contextLength), so
//    an episode whose next observation would not fit the context ends there instead of failing;
//  - max_turns ends it after that many replies (stop/max_turns).
// An env error (exception, timeout, crash, wrong shape) ends the episode and scores it 0: every step
// reward is set to 0 (the sampled turns still train, with the advantage of a 0 total).
import type { ChatMessage, ToolSpec } from '../../protocol/chatMessage';
import { cleanMessage } from '../../protocol/chatMessage';
import type { Renderer } from '../render/types';
import type { SamplingClient } from '../tinker/client';
import { type SamplingParams, textInput } from '../tinker/types';
import type { EnvRunner } from './runner';
import type { Transition } from './trajectory';
import type { EnvCallError } from './types';

export interface EpisodeLimits {
  maxTurns: number;
  maxTokens: number;
  maxTrajectoryTokens?: number;
  failedParseReward: number;
  terminateOnParseError: boolean;
  contextOverflowReward: number;
}

/** Why an episode ended (the cookbook's StopReason values, plus env_error). */
export type EpisodeStop = 'completed' | 'max_turns' | 'max_tokens' | 'context_overflow' | 'parse_error' | 'env_error';

/** One turn as a sample record keeps it: the messages shown before the reply, the reply, its step. */
export interface TranscriptTurn {
  /** messages new since the previous turn (all of them on the first turn, or when the env rewrote the history) */
  new_messages: ChatMessage[];
  /** the env replaced the history instead of extending it */
  reset?: boolean;
  reply: ChatMessage;
  ob_tokens: number;
  ac_tokens: number;
  stop_reason: string;
  reward: number;
  episode_done: boolean;
  metrics: Record<string, number>;
  logs?: Record<string, string | number>;
  parse_error?: string;
}

export interface Episode {
  transitions: Transition[];
  turns: TranscriptTurn[];
  /** the tools the env declared */
  tools?: ToolSpec[];
  /** the final conversation: every message, the tool prefix included, the last reply last */
  messages: ChatMessage[];
  stop: EpisodeStop;
  error?: EnvCallError & { where: string };
}

/**
 * The token limit of an episode: the spec's max_trajectory_tokens, capped by the model's context
 * length (the service's max_context_length); undefined when neither is known.
 */
export function trajectoryTokenLimit(maxTrajectoryTokens: number | undefined, contextLength: number | undefined): number | undefined {
  if (maxTrajectoryTokens === undefined) return contextLength;
  return contextLength === undefined ? maxTrajectoryTokens : Math.min(maxTrajectoryTokens, contextLength);
}

/** Whether the conversation `a` begins with `prefix` (messages compared as the renderer sees them). */
export const startsWith = (a: readonly ChatMessage[], prefix: readonly ChatMessage[]) => prefix.length <= a.length && prefix.every((m, i) => JSON.stringify(cleanMessage(m)) === JSON.stringify(cleanMessage(a[i]!)));

/** The conversation as rendered: the tool prefix (merging a leading system message into it), then the messages. */
export function withTools(renderer: Renderer, messages: readonly ChatMessage[], tools: readonly ToolSpec[] | undefined): ChatMessage[] {
  if (!tools || tools.length === 0) return [...messages];
  const system = messages[0]?.role === 'system' ? messages[0].content : undefined;
  return [...renderer.createConversationPrefixWithTools(tools, system), ...(system !== undefined ? messages.slice(1) : messages)];
}

/** Why a parsed reply is a parse failure, if it is. */
function parseFailure(termination: string, message: ChatMessage): string | undefined {
  if (message.unparsed_tool_calls?.length) return `tool call did not parse: ${message.unparsed_tool_calls[0]!.error}`;
  if (termination === 'malformed') return 'the reply did not end on the stop sequence';
  return undefined;
}

/** What an episode's player sees before each reply (Play as the Model shows it; the loop passes none). */
export interface EpisodeHooks {
  /** the conversation the next reply answers, the messages new since the last reply, the turns done so far */
  onObservation?(o: { conversation: readonly ChatMessage[]; newMessages: readonly ChatMessage[]; reset: boolean; turns: readonly TranscriptTurn[]; tools?: readonly ToolSpec[] }): void;
}

/**
 * Plays one episode. `sampler` is the policy: the run's sampling client, or anything answering
 * `sample` the same way (a person typing the replies: src/core/env/play.ts); the model's context caps
 * the episode where the policy knows it (`contextLength`).
 */
export async function runEpisode(env: EnvRunner, problem: unknown, sampler: Pick<SamplingClient, 'sample'> & Partial<Pick<SamplingClient, 'contextLength'>>, renderer: Renderer, params: SamplingParams, limits: EpisodeLimits, signal?: AbortSignal, hooks?: EpisodeHooks): Promise<Episode> {
  const ep = env.episode(problem);
  const transitions: Transition[] = [];
  const turns: TranscriptTurn[] = [];
  let stop: EpisodeStop = 'max_turns';
  let error: Episode['error'];
  let conversation: ChatMessage[] = [];
  let tools: ToolSpec[] | undefined;
  let shown: ChatMessage[] = [];
  const fail = (e: EnvCallError, where: string) => {
    error = { ...e, where };
    stop = 'env_error';
    for (const t of transitions) t.reward = 0;
    for (const t of turns) t.reward = 0;
  };
  try {
    const start = await ep.start();
    if (!start.ok) {
      fail(start.error, 'initial_observation');
      return { transitions, turns, messages: [], stop, error };
    }
    tools = start.value.tools;
    if (tools?.length && !renderer.supportsTools) {
      fail({ kind: 'invalid_result', message: `the environment declares tools, but the renderer ${renderer.name} has no tool calling` }, 'initial_observation');
      return { transitions, turns, messages: start.value.messages, stop, error };
    }
    conversation = withTools(renderer, start.value.messages, tools);
    let ob = renderer.buildGenerationPrompt(conversation);
    const limit = trajectoryTokenLimit(limits.maxTrajectoryTokens, (await sampler.contextLength?.(signal))?.length);
    // as the cookbook's MessageEnv (no max_generation_tokens reserve): an observation overflows when it
    // leaves no room for a reply; the sampling client caps max_tokens to what still fits the context
    const exceeds = (n: number) => limit !== undefined && n + 1 > limit;
    if (exceeds(ob.length)) {
      // the cookbook's InitialObservationOverflow: a synthetic turn, no sampling, the overflow reward
      transitions.push({ ob: [], acTokens: [], acLogprobs: [], reward: limits.contextOverflowReward, episodeDone: true, metrics: { max_tokens_reached: 1, 'stop/max_tokens': 1 } });
      return { transitions, turns, ...(tools ? { tools } : {}), messages: conversation, stop: 'max_tokens' };
    }
    for (let turn = 0; turn < limits.maxTurns; turn++) {
      signal?.throwIfAborted();
      const extends_ = startsWith(conversation, shown);
      const newMessages = extends_ ? conversation.slice(shown.length) : conversation;
      hooks?.onObservation?.({ conversation, newMessages, reset: !extends_ && turn > 0, turns, ...(tools ? { tools } : {}) });
      const r = await sampler.sample(textInput(ob), params, { numSamples: 1, signal });
      const s = r.sequences[0];
      if (!s || !s.logprobs || s.logprobs.length !== s.tokens.length) throw new Error('the sampler returned no sequence with per-token log-probs (needed for the importance-sampling loss)');
      const parsed = renderer.parseResponse(s.tokens);
      const reply = cleanMessage(parsed.message);
      const t: Transition = { ob, acTokens: s.tokens, acLogprobs: s.logprobs, reward: 0, episodeDone: false, metrics: {} };
      const rec: TranscriptTurn = { new_messages: newMessages, ...(extends_ || turn === 0 ? {} : { reset: true }), reply, ob_tokens: ob.length, ac_tokens: s.tokens.length, stop_reason: s.stop_reason, reward: 0, episode_done: false, metrics: {} };
      transitions.push(t);
      turns.push(rec);
      shown = [...conversation, reply];
      const end = (reward: number, metrics: Record<string, number>, why: EpisodeStop) => {
        t.reward = rec.reward = reward;
        t.metrics = rec.metrics = metrics;
        t.episodeDone = rec.episode_done = true;
        stop = why;
      };
      if (s.stop_reason === 'length') {
        end(limits.contextOverflowReward, { max_tokens_reached: 1, 'stop/max_tokens': 1 }, 'max_tokens');
        break;
      }
      const why = parseFailure(parsed.termination, reply);
      let parseReward = 0;
      if (why !== undefined) {
        rec.parse_error = why;
        if (limits.terminateOnParseError) {
          end(limits.failedParseReward, { parse_error: 1, 'stop/parse_error': 1 }, 'parse_error');
          break;
        }
        parseReward = limits.failedParseReward;
      }
      const step = await ep.step(reply);
      if (!step.ok) {
        fail(step.error, `step (turn ${turn + 1})`);
        break;
      }
      const v = step.value;
      const metrics = { ...(v.metrics ?? {}), ...(why !== undefined ? { parse_error: 1 } : {}) };
      t.reward = rec.reward = v.reward + parseReward;
      t.metrics = rec.metrics = metrics;
      if (v.logs && Object.keys(v.logs).length) t.logs = rec.logs = v.logs;
      if (v.episode_done) {
        t.episodeDone = rec.episode_done = true;
        stop = 'completed';
        break;
      }
      conversation = withTools(renderer, v.next_messages!, tools);
      ob = renderer.buildGenerationPrompt(conversation);
      if (exceeds(ob.length)) {
        end(limits.contextOverflowReward, { ...metrics, context_overflow: 1, 'stop/context_overflow': 1 }, 'context_overflow');
        break;
      }
      if (turn === limits.maxTurns - 1) {
        t.metrics = rec.metrics = { ...metrics, 'stop/max_turns': 1 };
        t.episodeDone = rec.episode_done = true;
        stop = 'max_turns';
        shown = [...conversation];
      }
    }
  } finally {
    await ep.close();
  }
  return { transitions, turns, ...(tools ? { tools } : {}), messages: shown.length ? shown : conversation, stop, ...(error ? { error } : {}) };
}
