// The tokens an SFT run implies before it starts: its steps × batch chats, each trained on whole
// (forward_backward over the chat's tokens); with a teacher, the teacher reads each chat too (prefill).
import { addModelUsage, textTokensAssumption, type UsageEstimate } from '../cost/estimate';
import type { UsageByModel } from '../tinker/usage';
import { loadChats } from '../training/chats';
import { itemsTrained, meanOf, messagesTokens } from '../training/estimateShapes';
import type { KindEstimateOptions } from '../training/runKind';
import type { ResolvedSftSpec } from './spec';

export async function estimateSftRun(spec: ResolvedSftSpec, o: KindEstimateOptions): Promise<UsageEstimate> {
  const chats = await loadChats(spec.dataset, { specDir: o.specDir, seed: spec.seed, cacheDir: o.cacheDir, ...(o.signal ? { signal: o.signal } : {}) });
  const perChat = meanOf(chats.train.map((c) => Math.min(messagesTokens(c.messages, spec.model), spec.max_length ?? Infinity)));
  const { steps, items } = itemsTrained(chats.train.length, { batchSize: spec.batch_size, numEpochs: spec.num_epochs, maxSteps: spec.max_steps });
  const usage: UsageByModel = new Map();
  const train = Math.round(items * perChat);
  addModelUsage(usage, spec.model, { train });
  if (spec.teacher) addModelUsage(usage, spec.teacher.model ?? spec.model, { prefill: train });
  return {
    what: `SFT run ${spec.name} (${steps} steps × ${Math.min(spec.batch_size, chats.train.length)} chats)`,
    usage,
    assumptions: [textTokensAssumption(spec.model), 'validation and inline evals not counted', ...(spec.teacher ? ['the teacher reads every trained chat once (prefill)'] : [])],
  };
}
