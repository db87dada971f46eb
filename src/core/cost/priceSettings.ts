// The price table in force, from where a user overrides the shipped one: the `tinker.prices` setting
// (VS Code) or a JSON file (the CLI's --prices, or TINKER_STUDIO_PRICES). Parsed at the edge; a bad
// value is refused with the field that is wrong, never silently replaced by the defaults (a budget
// checked against the wrong prices would stop a run late).
import * as fs from 'node:fs';
import { DEFAULT_PRICES } from './defaultPrices';
import { mergePrices, PriceOverrideSchema, type PriceOverride, type PriceTable } from './prices';

export class PriceTableError extends Error {
  override name = 'PriceTableError';
}

/** An override read from `value`; `where` names its origin in the error ("the tinker.prices setting", a file). */
export function readPriceOverride(value: unknown, where: string): PriceOverride {
  const r = PriceOverrideSchema.safeParse(value ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = issue.path.length ? issue.path.join('.') : '(the whole value)';
  const more = r.error.issues.length > 1 ? ` (and ${r.error.issues.length - 1} more)` : '';
  throw new PriceTableError(`${where}: ${field}: ${issue.message}${more}. Prices are US dollars per million tokens, e.g. {"models": {"Qwen/Qwen3-8B": {"prefill": 0.2, "sample": 0.6, "train": 0.44}}}`);
}

/** The shipped table with `value` (an override) over it. */
export function pricesFrom(value: unknown, where: string): PriceTable {
  return mergePrices(DEFAULT_PRICES, readPriceOverride(value, where));
}

/** The table from an override file (JSON), over the shipped one. */
export function pricesFromFile(file: string): PriceTable {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new PriceTableError(`cannot read the price table ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new PriceTableError(`${file}: not JSON (${(err as Error).message})`);
  }
  return pricesFrom(value, file);
}
