// A preference pair as two datums (chosen, rejected): prompt + completion rendered by the renderer,
// shifted by one (input = tokens[:-1], targets = tokens[1:]), weights 1 on the completion's tokens and
// 0 elsewhere — not normalised: DPO compares sequence log-probs (the cookbook's reduction "none").
import type { Message, Renderer } from '../render/types';
import { Datum, textInput } from '../tinker/types';
import type { PreferencePair } from './pairs';

export interface SideDatum {
  modelInput: number[];
  targetTokens: number[];
  weights: Float32Array;
  truncated: boolean;
}

export interface PairDatums {
  chosen: SideDatum;
  rejected: SideDatum;
}

/** One side (prompt + completion) as a datum, or why it has nothing to train. */
export function sideDatum(renderer: Renderer, prompt: readonly Message[], completion: readonly Message[], maxLength?: number): SideDatum | string {
  // the completion's assistant messages carry the loss; whatever the prompt renders to (its generation
  // prompt, earlier assistant turns included) carries none
  const ex = renderer.buildSupervisedExample([...prompt, ...completion], 'all_assistant_messages');
  const before = renderer.buildGenerationPrompt(prompt);
  for (let i = 0; i < before.length && i < ex.tokens.length && before[i] === ex.tokens[i]; i++) ex.weights[i] = 0;
  const truncated = maxLength !== undefined && ex.tokens.length > maxLength;
  const tokens = truncated ? ex.tokens.slice(0, maxLength) : ex.tokens;
  const w = (truncated ? ex.weights.slice(0, maxLength) : ex.weights).slice(1);
  if (tokens.length < 2 || !w.some((x) => x > 0)) return truncated ? `max_length ${maxLength} cuts it before the completion` : 'the completion renders to no token';
  return { modelInput: tokens.slice(0, -1), targetTokens: tokens.slice(1), weights: Float32Array.from(w, (x) => (x > 0 ? 1 : 0)), truncated };
}

/** A pair's two datums, or why it cannot train. */
export function pairDatums(renderer: Renderer, pair: PreferencePair, maxLength?: number): PairDatums | string {
  const chosen = sideDatum(renderer, pair.prompt, pair.chosen, maxLength);
  if (typeof chosen === 'string') return `chosen: ${chosen}`;
  const rejected = sideDatum(renderer, pair.prompt, pair.rejected, maxLength);
  if (typeof rejected === 'string') return `rejected: ${rejected}`;
  return { chosen, rejected };
}

export function toWireDatum(d: SideDatum): Datum {
  return {
    model_input: textInput(d.modelInput),
    loss_fn_inputs: {
      target_tokens: { dtype: 'int64', data: d.targetTokens },
      weights: { dtype: 'float32', data: d.weights },
    },
  };
}

/** The whole sequence of a datum (its input and last target), as the reference sampler scores it. */
export function fullSequence(d: SideDatum): number[] {
  return [...d.modelInput, d.targetTokens[d.targetTokens.length - 1]!];
}
