// The contract of prompt pools: problems with a prompt conversation and a ground truth, from JSONL
// files or Hugging Face datasets, split into train and holdout deterministically.
import type { Message } from '../render/types';

export interface Problem {
  /** stable id: "<file>:<line>" for JSONL, "<dataset>/<config>/<split>:<row>" for HF */
  id: string;
  /** the prompt conversation (system prompt, few-shot turns, then the user's question) */
  messages: Message[];
  groundTruth: string;
  /** the whole record (an environment run constructs each episode's environment from it) */
  row?: Record<string, unknown>;
}

export interface PromptPool {
  train: Problem[];
  holdout: Problem[];
  /** lines/rows skipped under the `skip` policy, with why */
  skipped: Array<{ where: string; reason: string }>;
}
