// The messages between the sample playground panel (webview/playground) and its host
// (src/vscode/playground/playgroundPanel.ts), inside the envelope of panelProtocol.ts. The webview owns the
// form (conversation, sides, parameters, reward file); the host samples, streams each result as it
// arrives, and keeps the form and the last runs in workspace state.
import * as z from 'zod';
import { RewardError } from './sampleSchema';
import { ChatMessage as FullMessage, ToolCall, UnparsedToolCall } from './chatMessage';
import type { PanelProtocol } from './panelProtocol';

export const SideId = z.enum(['A', 'B']);
export type SideId = z.infer<typeof SideId>;

export const SideSource = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('base'), model: z.string().min(1).max(300) }),
  z.object({ kind: z.literal('checkpoint'), path: z.string().min(1).max(1000) }),
]);
export type SideSource = z.infer<typeof SideSource>;

/** A side's source as text: the model name or the checkpoint path. */
export function sourceLabel(s: SideSource): string {
  return s.kind === 'base' ? s.model : s.path;
}

/**
 * A message of the playground's conversation: the shared chat message (src/protocol/chatMessage.ts)
 * with the playground's size limits. An assistant turn may hold reasoning and tool calls (a reply
 * continued from a sample), a tool result its call's id and function name.
 */
export const ChatMessage = FullMessage.omit({ content: true, thinking: true, tool_calls: true, unparsed_tool_calls: true, trainable: true }).extend({
  content: z.string().max(100_000),
  thinking: z.string().max(100_000).optional(),
  tool_calls: z.array(ToolCall).max(64).optional(),
  tool_call_id: z.string().max(1000).optional(),
  name: z.string().max(1000).optional(),
});
export type ChatMessage = z.infer<typeof ChatMessage>;

/** The roles the conversation editor offers (a message of another role, e.g. from a dataset, keeps its own). */
export const EDITOR_ROLES = ['system', 'user', 'assistant', 'tool'] as const;

/** A sampled reply as the renderer parsed it: what "Continue from this reply" appends to the conversation. */
export const ParsedReply = z.object({
  content: z.string(),
  thinking: z.string().optional(),
  tool_calls: z.array(ToolCall).optional(),
  unparsed_tool_calls: z.array(UnparsedToolCall).optional(),
});
export type ParsedReply = z.infer<typeof ParsedReply>;

/**
 * The conversation after continuing from `reply`: the reply as an assistant turn (its reasoning and
 * parsed calls; a malformed call is not sent back as a call), then one empty tool result per call,
 * carrying the call's id and function name, for the person to fill in.
 */
export function continueWith(messages: readonly ChatMessage[], reply: ParsedReply): ChatMessage[] {
  const assistant: ChatMessage = { role: 'assistant', content: reply.content };
  if (reply.thinking) assistant.thinking = reply.thinking;
  if (reply.tool_calls?.length) assistant.tool_calls = reply.tool_calls;
  const results: ChatMessage[] = (reply.tool_calls ?? []).map((c) => ({ role: 'tool', content: '', name: c.function.name, ...(c.id ? { tool_call_id: c.id } : {}) }));
  return [...messages, assistant, ...(results.length ? results : [{ role: 'user', content: '' } satisfies ChatMessage])];
}

export const Params = z.object({
  temperature: z.number().min(0).max(5),
  topP: z.number().gt(0).max(1),
  topK: z.number().int().min(-1).max(100_000),
  maxTokens: z.number().int().min(1).max(16_384),
  n: z.number().int().min(1).max(64),
  seed: z.number().int().nonnegative().max(2 ** 32 - 1).optional(),
  /** none: the renderer's */
  stop: z.array(z.string().min(1).max(200)).max(8).optional(),
});
export type Params = z.infer<typeof Params>;

export const DEFAULT_PARAMS: Params = { temperature: 1, topP: 1, topK: -1, maxTokens: 64, n: 4 };

export const PlaygroundForm = z.object({
  messages: z.array(ChatMessage).min(1).max(128),
  groundTruth: z.string().max(10_000).optional(),
  A: SideSource.optional(),
  B: SideSource.optional(),
  params: Params,
  /** absolute path of the reward file scoring the samples */
  rewardFile: z.string().max(4096).optional(),
});
export type PlaygroundForm = z.infer<typeof PlaygroundForm>;

export const SideInfo = z.object({
  side: SideId,
  baseModel: z.string(),
  renderer: z.string(),
  promptTokens: z.number().int(),
});
export type SideInfo = z.infer<typeof SideInfo>;

/** A sample as the webview shows it (its token ids and log-probs are a `sampleTokens` request). */
export const SampleView = z.object({
  side: SideId,
  index: z.number().int().nonnegative(),
  text: z.string(),
  stopReason: z.string(), // 'stop', 'length', or a newer reason shown as the server named it
  tokens: z.number().int().nonnegative(),
  ms: z.number().nonnegative(),
  reward: z.number().optional(),
  rewardError: RewardError.optional(),
  /** the reply as the side's renderer parsed it (absent in older history) */
  message: ParsedReply.optional(),
  /** how the parse ended: stop_sequence, eos, or malformed (cut off, no stop token) */
  termination: z.string().optional(),
});
export type SampleView = z.infer<typeof SampleView>;

export const SideResult = z.object({
  info: SideInfo.optional(),
  samples: z.array(SampleView),
  meanReward: z.number().optional(),
  errors: z.array(z.string()),
});
export type SideResult = z.infer<typeof SideResult>;

/** One run: what was asked and what came back so far. */
export const RunView = z.object({
  id: z.string(),
  startedAt: z.string(),
  form: PlaygroundForm,
  status: z.enum(['running', 'done', 'cancelled']),
  /** why there are no rewards (no reward file, no ground truth, untrusted workspace) */
  rewardNote: z.string().optional(),
  sides: z.object({ A: SideResult.optional(), B: SideResult.optional() }),
});
export type RunView = z.infer<typeof RunView>;

export const HistoryItem = z.object({ id: z.string(), startedAt: z.string(), label: z.string() });

export const PlaygroundSnapshot = z.object({
  type: z.literal('snapshot'),
  form: PlaygroundForm,
  /** sampler checkpoints of the runs folder */
  checkpoints: z.array(z.object({ label: z.string(), path: z.string() })),
  rewardFiles: z.array(z.string()),
  run: RunView.optional(),
  history: z.array(HistoryItem),
});
export type PlaygroundSnapshot = z.infer<typeof PlaygroundSnapshot>;

export const ToWebview = z.discriminatedUnion('type', [
  PlaygroundSnapshot,
  /** the server's base models, listed after the snapshot (listing may start the local engine) */
  z.object({ type: z.literal('models'), models: z.array(z.string()), error: z.string().optional() }),
  /** the host changed the form (opened with a checkpoint, a run, a problem) */
  z.object({ type: z.literal('form'), form: PlaygroundForm }),
  /** a run started: its results follow as `side`, `sample` and `sideError`, then `runDone` */
  z.object({ type: z.literal('runStarted'), run: RunView }),
  /** a side is ready: its model, renderer and prompt length */
  z.object({ type: z.literal('side'), runId: z.string(), info: SideInfo }),
  z.object({ type: z.literal('sample'), runId: z.string(), sample: SampleView }),
  z.object({ type: z.literal('sideError'), runId: z.string(), side: SideId, message: z.string() }),
  z.object({ type: z.literal('runDone'), run: RunView, history: z.array(HistoryItem) }),
  z.object({ type: z.literal('error'), message: z.string() }),
  // --- preference collection (DPO pairs) ---
  /** a preference was appended to the pairs file (its line and how many pairs the file holds) */
  z.object({ type: z.literal('preferenceSaved'), file: z.string(), line: z.number().int().positive(), pairs: z.number().int().nonnegative() }),
]);
export type ToWebview = z.infer<typeof ToWebview>;

/** A result streamed into the running run. */
export type RunUpdate = Extract<ToWebview, { type: 'side' | 'sample' | 'sideError' }>;

/** Adds a streamed result to its run: the host and the webview keep the same run this way. */
export function applyRunUpdate(run: RunView, m: RunUpdate): void {
  if (m.runId !== run.id) return;
  const side = m.type === 'side' ? m.info.side : m.type === 'sample' ? m.sample.side : m.side;
  const r = (run.sides[side] ??= { samples: [], errors: [] });
  if (m.type === 'side') r.info = m.info;
  else if (m.type === 'sample') {
    r.samples.push(m.sample);
    r.samples.sort((a, b) => a.index - b.index);
  } else r.errors.push(m.message);
}

const SampleRef = { side: SideId, index: z.number().int().nonnegative() };

export const FromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('run'), form: PlaygroundForm }),
  z.object({ type: z.literal('cancel') }),
  /** the form changed: remember it for the workspace */
  z.object({ type: z.literal('saveForm'), form: PlaygroundForm }),
  z.object({ type: z.literal('openRewardFile'), line: z.number().int().positive().optional() }),
  /** the two samples in the native diff editor */
  z.object({ type: z.literal('compare'), left: z.object(SampleRef), right: z.object(SampleRef) }),
  z.object({ type: z.literal('saveExample'), ...SampleRef, expected: z.number().finite() }),
  /** one sample, or the whole run without `side` */
  z.object({ type: z.literal('copyJson'), side: SideId.optional(), index: z.number().int().nonnegative().optional() }),
  z.object({ type: z.literal('showHistory'), id: z.string().max(100) }),
  z.object({ type: z.literal('pickRewardFile') }),
  /** fill the prompt and ground truth from a problem of a run's dataset */
  z.object({ type: z.literal('pickProblem') }),
  z.object({ type: z.literal('webviewError'), message: z.string().max(4000) }),
  // --- preference collection (DPO pairs) ---
  /** side `better`'s selected sample is preferred to the other side's: append the pair to the preferences file */
  z.object({ type: z.literal('preference'), better: SideId, A: z.number().int().nonnegative(), B: z.number().int().nonnegative() }),
  /** the preferences file in the Preference Pairs panel */
  z.object({ type: z.literal('openPreferences') }),
]);
export type FromWebview = z.infer<typeof FromWebview>;

export const PlaygroundRequests = {
  /** the conversation as the side's renderer writes it */
  renderedPrompt: {
    params: z.object({ source: SideSource, messages: z.array(ChatMessage).min(1).max(128) }),
    result: z.object({ renderer: z.string(), baseModel: z.string(), tokens: z.number().int(), text: z.string() }),
  },
  /** a sample of the shown run, token by token with its log-prob */
  sampleTokens: {
    params: z.object(SampleRef),
    result: z.object({ tokens: z.array(z.object({ text: z.string(), logprob: z.number().nullable() })) }),
  },
};

export const PlaygroundPanelState = z.object({ kind: z.literal('playground') });
export type PlaygroundPanelState = z.infer<typeof PlaygroundPanelState>;

export const PlaygroundProtocol = {
  toWebview: ToWebview,
  fromWebview: FromWebview,
  requests: PlaygroundRequests,
  state: PlaygroundPanelState,
} satisfies PanelProtocol;
