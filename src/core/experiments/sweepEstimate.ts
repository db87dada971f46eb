// A sweep's estimate before it starts: the sum of its runs' (each point's spec as the sweep expands
// it), priced with the table in force.
import * as path from 'node:path';
import { combineEstimates, priceEstimate, type CostEstimate, type UsageEstimate } from '../cost/estimate';
import { runUsageEstimate, type EstimateOptions } from '../kinds/estimate';
import { expandSweep } from './expand';
import { readSweepFile, sweepName } from './sweepFile';

/** The sweep's runs' estimates summed (runs already done are counted too: the whole job), or undefined when its kind gives none. */
export async function estimateSweep(sweepFile: string, o: EstimateOptions): Promise<CostEstimate | undefined> {
  const file = path.resolve(sweepFile);
  const s = readSweepFile(file);
  const expanded = await expandSweep(file, s);
  const parts: UsageEstimate[] = [];
  for (const p of expanded.points) {
    const e = await runUsageEstimate(expanded.kind, p.spec, { specDir: path.dirname(expanded.baseFile), cacheDir: o.cacheDir, ...(o.signal ? { signal: o.signal } : {}) });
    if (!e) return undefined;
    parts.push(e);
  }
  const stops = s.early_terminate ? ['runs the median rule stops early cost less'] : [];
  return priceEstimate(o.prices, combineEstimates(`sweep ${sweepName(file, s)} (${parts.length} runs)`, parts, stops));
}
