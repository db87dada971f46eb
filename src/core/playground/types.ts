// The sample playground's vocabulary: a side (a base model or a sampler checkpoint), the prompt
// conversation with its optional ground truth, the sampling parameters, and what comes back.
import type { Message, Termination } from '../render/types';
import type { RewardError } from '../reward/types';
import type { StopReason } from '../tinker/types';

export type SideId = 'A' | 'B';

/** What a side samples from: a base model the server serves, or a sampler checkpoint. */
export type SideSource = { kind: 'base'; model: string } | { kind: 'checkpoint'; path: string };

export interface PlaygroundParams {
  temperature: number;
  topP: number;
  /** -1: no top-k cut */
  topK: number;
  maxTokens: number;
  /** samples per side; each is its own request, so each shows when it completes */
  n: number;
  /** sample i uses seed + i; none: the server picks */
  seed?: number;
  /** none: the renderer's stop sequences */
  stop?: string[];
}

export interface PlaygroundPrompt {
  messages: Message[];
  /** the reward's ground truth; rewards are computed only with one */
  groundTruth?: string;
}

export interface PlaygroundRequest {
  prompt: PlaygroundPrompt;
  params: PlaygroundParams;
  sides: Partial<Record<SideId, SideSource>>;
}

/** A side ready to sample: its model, renderer and rendered prompt. */
export interface SideInfo {
  side: SideId;
  source: SideSource;
  baseModel: string;
  renderer: string;
  promptTokens: number;
  /** the stop sequences sent (strings, or token ids) */
  stop: string[] | number[];
}

export interface PlaygroundSample {
  side: SideId;
  index: number;
  text: string;
  tokens: number[];
  logprobs: number[];
  stopReason: StopReason;
  termination: Termination;
  /** the reply as the renderer parsed it: content, reasoning, tool calls (parsed and malformed) */
  message: Message;
  /** from submitting the request to its result */
  ms: number;
  reward?: number;
  rewardError?: RewardError;
}

export type PlaygroundEvent =
  | { type: 'side'; info: SideInfo }
  | { type: 'sample'; sample: PlaygroundSample }
  /** the side could not sample (checkpoint gone, model not served, no renderer, request failed) */
  | { type: 'sideError'; side: SideId; message: string };

export interface SideSummary {
  samples: number;
  /** mean reward of the side's samples, when rewards were computed */
  meanReward?: number;
  error?: string;
}

export interface PlaygroundSummary {
  sides: Partial<Record<SideId, SideSummary>>;
  cancelled: boolean;
}
