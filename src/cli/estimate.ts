// What the CLI prints before a run, a sweep or an eval starts: the whole job's estimated cost from its
// shapes and the price table in force (--prices, TINKER_STUDIO_PRICES, else the shipped table), with
// what the figure assumes. An estimate that cannot be made is said, and the job starts anyway (it
// reports its own problem).
import type { CostEstimate } from '../core/cost/estimate';
import { errorMessage } from '../core/errors';

export async function printEstimate(make: () => Promise<CostEstimate | undefined>, write: (line: string) => void): Promise<void> {
  try {
    const e = await make();
    if (!e) return;
    const { estimateLines } = await import('../core/cost/estimate');
    for (const line of estimateLines(e)) write(line);
  } catch (err) {
    write(`no cost estimate: ${errorMessage(err)}`);
  }
}

/** The price table in force for an estimate: the one given, else the shipped defaults. */
export async function pricesForEstimate(given: import('../core/cost/prices').PriceTable | undefined): Promise<import('../core/cost/prices').PriceTable> {
  return given ?? (await import('../core/cost/defaultPrices')).DEFAULT_PRICES;
}
