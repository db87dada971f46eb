// A run's estimate before it starts, for any kind: the kind's descriptor says what tokens its spec
// implies (its own estimate.ts), priced here with the table in force. The start flows (the runner,
// the CLI, sweeps) call this and never name a kind.
import * as path from 'node:path';
import { priceEstimate, type CostEstimate, type UsageEstimate } from '../cost/estimate';
import type { PriceTable } from '../cost/prices';
import type { KindEstimateOptions } from '../training/runKind';
import { runKindIdOfFile } from '../spec/kinds';
import { mergeSpec } from '../spec/overrides';
import { parseJsonWithPosition, readSpecText } from '../spec/text';
import { runKind } from './registry';

export interface EstimateOptions {
  /** tokenizer and Hugging Face cache */
  cacheDir: string;
  /** the price table in force (the shipped defaults with `tinker.prices` over them) */
  prices: PriceTable;
  signal?: AbortSignal;
}

/** The tokens of a run of `spec` (validated by the kind's spec module), or undefined when the kind gives no estimate. */
export async function runUsageEstimate(kindId: string, spec: unknown, o: KindEstimateOptions): Promise<UsageEstimate | undefined> {
  const kind = await runKind(kindId);
  return kind.estimate ? kind.estimate(spec, o) : undefined;
}

/** The estimate of a run of a spec file (its kind from its extension), priced; undefined when the kind gives none. */
export async function estimateSpecFile(specFile: string, o: EstimateOptions, overrides?: Record<string, unknown>): Promise<CostEstimate | undefined> {
  const kindId = runKindIdOfFile(specFile);
  if (!kindId) throw new Error(`${path.basename(specFile)}: not a run spec file`);
  const kind = await runKind(kindId);
  if (!kind.estimate) return undefined;
  const mod = await kind.spec();
  const abs = path.resolve(specFile);
  const { spec } = overrides && Object.keys(overrides).length ? await mod.parseValue(mergeSpec(parseJsonWithPosition(await readSpecText(abs), path.basename(abs)), overrides), abs) : await mod.parseFile(abs);
  return priceEstimate(o.prices, await kind.estimate(spec, { specDir: path.dirname(abs), cacheDir: o.cacheDir, ...(o.signal ? { signal: o.signal } : {}) }));
}

