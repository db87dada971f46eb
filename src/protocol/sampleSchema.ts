// The schema of one per-sample record (src/core/runs/sampleRecord.ts reads and writes them). Only zod here: the webview panels
// import it too.
import * as z from 'zod';
import { questionInPrompt } from './promptQuestion';
import { ChatMessage, ToolCall, ToolSpec, UnparsedToolCall } from './chatMessage';

export const RewardError = z.object({
  kind: z.string(),
  message: z.string(),
  traceback: z.string().optional(),
  /** the line of the reward file the traceback points at */
  line: z.number().int().positive().optional(),
});
export type RewardError = z.infer<typeof RewardError>;

/** A reward runner's error as records keep it (no column). */
export function recordedRewardError(e: RewardError & { column?: number }): RewardError {
  return { kind: e.kind, message: e.message, ...(e.traceback ? { traceback: e.traceback } : {}), ...(e.line ? { line: e.line } : {}) };
}

/** One turn of an environment episode: the messages shown before the reply (user, tool, system), the reply, its step. */
export const TranscriptTurn = z.object({
  /** messages new since the previous turn (all of them on the first turn, or after a `reset`) */
  new_messages: z.array(ChatMessage),
  /** the environment rewrote the history instead of extending it (a new datum started) */
  reset: z.boolean().optional(),
  /** the model's reply, as the run's renderer parsed it (content, thinking, tool_calls, unparsed_tool_calls) */
  reply: ChatMessage,
  ob_tokens: z.number().int().nonnegative(),
  ac_tokens: z.number().int().nonnegative(),
  stop_reason: z.string(),
  reward: z.number(),
  episode_done: z.boolean(),
  metrics: z.record(z.string(), z.number()),
  logs: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  /** why the reply did not parse (a malformed message or tool call) */
  parse_error: z.string().optional(),
});
export type TranscriptTurn = z.infer<typeof TranscriptTurn>;

/** An environment episode as its sample record keeps it. */
export const EpisodeTranscript = z.object({
  turns: z.array(TranscriptTurn),
  /** the tools the environment declared */
  tools: z.array(ToolSpec).optional(),
  /** why it ended: completed, max_turns, max_tokens, context_overflow, parse_error, env_error */
  stop: z.string(),
  /** compute_group_rewards' reward and metrics (0 and {} without it) */
  group_reward: z.number(),
  group_metrics: z.record(z.string(), z.number()),
});
export type EpisodeTranscript = z.infer<typeof EpisodeTranscript>;

/** What the breakdown's list and the run doctor read of an episode (the transcript stays on the host until a sample is opened). */
export const EpisodeSummary = z.object({
  /** the model's turns */
  turns: z.number().int().nonnegative(),
  /** why it ended (EpisodeTranscript.stop) */
  stop: z.string(),
  /** replies that did not parse */
  parse_errors: z.number().int().nonnegative(),
  /** tool calls parsed from the replies */
  tool_calls: z.number().int().nonnegative(),
  /** the first reply's parse error, when one did not parse */
  first_parse_error: z.string().optional(),
});
export type EpisodeSummary = z.infer<typeof EpisodeSummary>;

export function episodeSummary(t: EpisodeTranscript): EpisodeSummary {
  let parseErrors = 0;
  let toolCalls = 0;
  let first: string | undefined;
  for (const turn of t.turns) {
    if (turn.parse_error !== undefined) {
      parseErrors++;
      first ??= turn.parse_error;
    }
    toolCalls += turn.reply.tool_calls?.length ?? 0;
  }
  return { turns: t.turns.length, stop: t.stop, parse_errors: parseErrors, tool_calls: toolCalls, ...(first !== undefined ? { first_parse_error: first } : {}) };
}

export const SampleRecord = z.object({
  group_idx: z.number().int().min(0),
  traj_idx: z.number().int().min(0),
  problem_id: z.string(),
  /** the rendered prompt, special tokens written out */
  prompt: z.string(),
  /** the problem's question: its last user message, as the data gave it (absent in older runs) */
  question: z.string().optional(),
  /** the sampled text, stop token included */
  completion: z.string(),
  /** the parsed message content the reward function saw */
  content: z.string(),
  /** the parsed message's reasoning (a renderer with thinking; absent in older runs and when there was none) */
  thinking: z.string().optional(),
  /** the tool calls the renderer parsed from the completion (absent when none) */
  tool_calls: z.array(ToolCall).optional(),
  /** tool calls the model wrote that did not parse, with why (absent when none) */
  unparsed_tool_calls: z.array(UnparsedToolCall).optional(),
  ground_truth: z.string(),
  completion_tokens: z.array(z.number().int()),
  logprobs: z.array(z.number()),
  reward: z.number(),
  advantage: z.number(),
  stop_reason: z.string(),
  termination: z.string(),
  reward_error: RewardError.optional(),
  /** the grader's `format` metric, when the reward function returned {"reward", "format"} */
  format: z.number().optional(),
  /** what a benchmark's grader read as the answer (a number, a boxed answer, a letter) */
  extracted: z.string().optional(),
  /** a distillation run's teacher log-prob of each completion token (aligned with completion_tokens) */
  teacher_logprobs: z.array(z.number()).optional(),
  /** an environment run's episode: every turn (completion_tokens and logprobs are all turns' actions, in order) */
  transcript: EpisodeTranscript.optional(),
});
export type SampleRecord = z.infer<typeof SampleRecord>;

/** The fields of a record that keep the parsed message beyond its content (only those it has). */
export function parsedMessageFields(m: Pick<ChatMessage, 'thinking' | 'tool_calls' | 'unparsed_tool_calls'>): Pick<SampleRecord, 'thinking' | 'tool_calls' | 'unparsed_tool_calls'> {
  return {
    ...(m.thinking !== undefined && m.thinking !== '' ? { thinking: m.thinking } : {}),
    ...(m.tool_calls?.length ? { tool_calls: m.tool_calls } : {}),
    ...(m.unparsed_tool_calls?.length ? { unparsed_tool_calls: m.unparsed_tool_calls } : {}),
  };
}

/** The assistant message a record's completion was parsed into (older records: its content only). */
export function recordMessage(r: Pick<SampleRecord, 'content' | 'thinking' | 'tool_calls' | 'unparsed_tool_calls'>): ChatMessage {
  return { role: 'assistant', content: r.content, ...parsedMessageFields(r) };
}

/**
 * The one definition of "stopped" behind every stop rate (summary.json, the results panel, the Inspect
 * export, the breakdown's "truncated"): the sampler ended the completion itself — a stop sequence, a stop
 * string or the end-of-sequence token — rather than cutting it at max_tokens (stop_reason "length").
 * Whether the renderer then parsed a well-formed message (`termination`) is a different question.
 */
export function stoppedOnItsOwn(r: Pick<SampleRecord, 'stop_reason'>): boolean {
  return r.stop_reason !== 'length';
}

/** Characters of a completion the breakdown's list carries; the whole sample loads when selected. */
export const PREVIEW_CHARS = 160;

/**
 * A sample as the breakdown panel's list shows it: no token ids, log-probs, parsed content or prompt
 * (the prompt is sent once per group), and the completion's first characters only. At 1,024 groups ×
 * 16 samples × 256 tokens the whole records are ~20 MB of JSON; these are ~15× less.
 */
export const SampleSummary = SampleRecord.omit({
  transcript: true,
  completion_tokens: true,
  logprobs: true,
  teacher_logprobs: true,
  prompt: true,
  completion: true,
  content: true,
  thinking: true,
  tool_calls: true,
  unparsed_tool_calls: true,
}).extend({
  token_count: z.number().int().nonnegative(),
  /** the completion's first PREVIEW_CHARS characters, whitespace runs as one space */
  preview: z.string(),
  /** the preview is the whole completion */
  complete: z.boolean(),
  /** the completion has reasoning (shown folded in the detail) */
  has_thinking: z.boolean().optional(),
  /** tool calls parsed from the completion */
  tool_call_count: z.number().int().nonnegative().optional(),
  /** tool calls that did not parse */
  malformed_call_count: z.number().int().nonnegative().optional(),
  /** an environment episode: its turns, how it ended, its parse errors (the transcript is in the `sample` request) */
  episode: EpisodeSummary.optional(),
});
export type SampleSummary = z.infer<typeof SampleSummary>;

export const GroupPrompt = z.object({
  group_idx: z.number().int().min(0),
  /** the rendered prompt (the sample's detail shows it) */
  prompt: z.string(),
  /** the question the group's rows preview; absent when a record has none and the template is not recognised */
  question: z.string().optional(),
});
export type GroupPrompt = z.infer<typeof GroupPrompt>;

export function summarizeSample(r: SampleRecord): SampleSummary {
  // only the head is flattened (an iteration's texts are tens of MB), and single spaces are left
  // alone: replacing every word gap made this the slowest step of a snapshot
  const preview = r.completion.slice(0, 2 * PREVIEW_CHARS).replace(/\s{2,}|[^\S ]/g, ' ').slice(0, PREVIEW_CHARS);
  // one object shape for every sample (a rest/spread copy is several times slower at 16k samples)
  const s: SampleSummary = {
    group_idx: r.group_idx,
    traj_idx: r.traj_idx,
    problem_id: r.problem_id,
    ground_truth: r.ground_truth,
    reward: r.reward,
    advantage: r.advantage,
    stop_reason: r.stop_reason,
    termination: r.termination,
    token_count: r.completion_tokens.length,
    preview,
    complete: preview === r.completion,
  };
  if (r.reward_error) s.reward_error = r.reward_error;
  if (r.thinking) s.has_thinking = true;
  if (r.tool_calls?.length) s.tool_call_count = r.tool_calls.length;
  if (r.unparsed_tool_calls?.length) s.malformed_call_count = r.unparsed_tool_calls.length;
  if (r.transcript) s.episode = episodeSummary(r.transcript);
  return s;
}

/** An iteration's samples as the breakdown's snapshot carries them: summaries, and each group's prompt and question once. */
export function summarizeIteration(records: readonly SampleRecord[]): { records: SampleSummary[]; prompts: GroupPrompt[] } {
  const prompts = new Map<number, GroupPrompt>();
  for (const r of records) {
    if (prompts.has(r.group_idx)) continue;
    const question = r.question ?? questionInPrompt(r.prompt);
    prompts.set(r.group_idx, { group_idx: r.group_idx, prompt: r.prompt, ...(question !== undefined ? { question } : {}) });
  }
  return { records: records.map(summarizeSample), prompts: [...prompts.values()] };
}
