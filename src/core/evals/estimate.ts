// An eval's estimate before it starts: problems × n samples × targets, each sample a request of its
// own (the prompt prefilled, the completion at max_tokens: an upper bound), at each target's base
// model's prices. Samples already in the results folder are not counted again (a resume costs what
// is missing).
import * as path from 'node:path';
import { addModelUsage, priceEstimate, textTokensAssumption, type CostEstimate } from '../cost/estimate';
import type { PriceTable } from '../cost/prices';
import { messagesTokens } from '../training/estimateShapes';
import type { UsageByModel } from '../tinker/usage';
import { readTargetSamples } from './results';
import { loadEvalProblems, resolveTargets } from './runEval';
import { parseEvalSpecFile, type LoadedEvalSpec } from './spec';

export interface EvalEstimateOptions {
  cacheDir: string;
  prices: PriceTable;
  /** results folder; default `evals/<spec name>/` next to the spec */
  out?: string;
  runsDirs?: readonly string[];
  loaded?: LoadedEvalSpec;
  signal?: AbortSignal;
}

/** The cost of what the eval has left to sample, or undefined for an NLL eval (it samples nothing). */
export async function estimateEval(specFile: string, o: EvalEstimateOptions): Promise<CostEstimate | undefined> {
  const loaded = o.loaded ?? (await parseEvalSpecFile(specFile));
  const { spec } = loaded;
  if (spec.nll || !spec.dataset || spec.max_tokens === undefined) return undefined;
  const outDir = path.resolve(o.out ?? path.join(loaded.dir, 'evals', spec.name));
  const { targets } = await resolveTargets(spec, loaded.dir, path.basename(loaded.file), o.runsDirs ?? []);
  const problems = await loadEvalProblems(spec.dataset, { specDir: loaded.dir, cacheDir: o.cacheDir, ...(o.signal ? { signal: o.signal } : {}), ...(spec.env ? { environment: true } : {}) });
  const usage: UsageByModel = new Map();
  let samples = 0;
  for (const t of targets) {
    const have = new Set(readTargetSamples(outDir, t.id).map((r) => `${r.problem_id}\u0000${r.traj_idx}`));
    for (const p of problems) {
      const prompt = messagesTokens(p.messages, t.model);
      for (let i = 0; i < spec.n; i++) {
        if (have.has(`${p.id}\u0000${i}`)) continue;
        samples++;
        addModelUsage(usage, t.model, { prefill: prompt, sampled: spec.max_tokens });
      }
    }
  }
  const models = [...new Set(targets.map((t) => t.model))];
  return priceEstimate(o.prices, {
    what: `eval ${spec.name} (${samples} samples left: ${problems.length} problems × n=${spec.n} × ${targets.length} targets)`,
    usage,
    assumptions: [
      `every completion at max_tokens (${spec.max_tokens}): an upper bound`,
      ...models.map(textTokensAssumption),
      'a checkpoint target priced as its base model',
      ...(spec.env ? ['an environment episode counted as one turn'] : []),
    ],
  });
}
