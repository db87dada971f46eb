// What the supervised kinds' estimates share: a conversation's text tokens and the batches a run takes.
import { estimateTextTokens } from '../cost/estimate';
import type { Message } from '../render/types';
import { totalSteps } from './batches';

/** The text tokens of a conversation (its messages' content and reasoning). */
export function messagesTokens(messages: readonly Message[], model: string): number {
  return messages.reduce((a, m) => a + estimateTextTokens(m.content + (m.thinking ?? ''), model), 0);
}

export const meanOf = (xs: readonly number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** The items a supervised run trains on in all: its steps × the batch (as the loop takes them). */
export function itemsTrained(nTrain: number, c: { batchSize: number; numEpochs?: number | undefined; maxSteps?: number | undefined }): { steps: number; items: number } {
  const steps = totalSteps(nTrain, c);
  return { steps, items: steps * Math.min(c.batchSize, nTrain) };
}
