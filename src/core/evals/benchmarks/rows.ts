// Reading a benchmark row's fields: a row that does not fit names the dataset, the row and the field.
import { DatasetError } from '../../data/problem';

export function rowString(row: Record<string, unknown>, field: string, where: string): string {
  const v = row[field];
  if (typeof v !== 'string' || v.length === 0) throw new DatasetError(`${where}: field "${field}" must be a non-empty string (got ${v === undefined ? 'nothing' : JSON.stringify(v)?.slice(0, 60)})`);
  return v;
}

/** The cookbook's recommended system prompt of the math benchmarks. */
export const BOXED_SYSTEM_PROMPT = 'Put your final answer in \\boxed{}.';

/** The cookbook's BenchmarkConfig defaults (a reasoning model's budget; clamped to the context at run time). */
export const COOKBOOK_SAMPLING = { temperature: 0.6, max_tokens: 32768, n: 1 } as const;
