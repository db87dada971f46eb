// The tokens a DPO run implies before it starts: its steps × batch pairs, each side (prompt + chosen,
// prompt + rejected) trained on, and read once by the reference model (its prompt log-probs: prefill).
import { addModelUsage, textTokensAssumption, type UsageEstimate } from '../cost/estimate';
import type { UsageByModel } from '../tinker/usage';
import { itemsTrained, meanOf, messagesTokens } from '../training/estimateShapes';
import type { KindEstimateOptions } from '../training/runKind';
import type { ResolvedDpoSpec } from './spec';
import { loadPairs } from './start';

export async function estimateDpoRun(spec: ResolvedDpoSpec, o: KindEstimateOptions): Promise<UsageEstimate> {
  const pairs = await loadPairs(spec.dataset, { specDir: o.specDir, seed: spec.seed });
  const cap = (n: number) => Math.min(n, spec.max_length ?? Infinity);
  const perPair = meanOf(
    pairs.train.map((p) => {
      const prompt = messagesTokens(p.prompt, spec.model);
      return cap(prompt + messagesTokens(p.chosen, spec.model)) + cap(prompt + messagesTokens(p.rejected, spec.model));
    }),
  );
  const { steps, items } = itemsTrained(pairs.train.length, { batchSize: spec.batch_size, numEpochs: spec.num_epochs, maxSteps: spec.max_steps });
  const usage: UsageByModel = new Map();
  // the reference scores each distinct pair once (the loop keeps its log-probs), at most every train pair
  const referenced = Math.min(items, pairs.train.length);
  addModelUsage(usage, spec.model, { train: Math.round(items * perPair), prefill: Math.round(referenced * perPair) });
  return {
    what: `DPO run ${spec.name} (${steps} steps × ${Math.min(spec.batch_size, pairs.train.length)} pairs)`,
    usage,
    assumptions: [textTokensAssumption(spec.model), 'the reference model (the weights at step 0) priced as the base model', 'validation not counted'],
  };
}
