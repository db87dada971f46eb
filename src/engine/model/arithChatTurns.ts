// arith-chat's holdout evaluation (core/evals/arithChatEval.ts) sampled on the engine itself: each
// assistant turn is one request to a LocalBackend sampler, stopped at <|im_end|>, with the request's own
// seed. scripts/eval-arith-chat.mjs, scripts/pretrain-arith-chat.mjs and the eval record's test drive
// the evaluation through it, so the three sample the same way.
import type { SampleTurn } from '../../core/evals/arithChatEval';
import type { LocalBackend } from './backend';
import { BYTE_TOKENIZER } from './models';

/** The chat renderer's end of a message: where a sampled turn stops. */
const IM_END = BYTE_TOKENIZER.specialTokens['<|im_end|>']!;

/** Samples a turn from `samplerId` of `backend` at `temperature` (full top-p and top-k). */
export function engineSampleTurn(backend: Pick<LocalBackend, 'sample'>, samplerId: string, temperature: number): SampleTurn {
  return async (prompt, maxTokens, seed) => {
    const r = await backend.sample(samplerId, {
      prompt: Int32Array.from(prompt),
      numSamples: 1,
      params: { maxTokens, temperature, topP: 1, topK: -1, stopStrings: [], stopTokens: [IM_END], seed },
      promptLogprobs: false,
      topkPromptLogprobs: 0,
    });
    return [...r.sequences[0]!.tokens];
  };
}
