// A checkpoint's storage estimate per month from its size: the words the Checkpoints view's tooltip
// shows. No zod here (the view loads it at activation): the rate comes from the table in force.
import type { PriceTable } from './prices';

/** "Storage: about $0.01 per month (estimate: 120 MB at $0.10 per GB-month, prices taken 2026-10-07)". */
export function checkpointStorageText(bytes: number, table: Pick<PriceTable, 'storage_usd_per_gb_month' | 'taken'>): string {
  const usd = (bytes / 1e9) * table.storage_usd_per_gb_month;
  const amount = usd === 0 ? '$0.00' : usd < 0.01 ? 'under $0.01' : `about $${usd.toFixed(2)}`;
  return `Storage: ${amount} per month (estimate: ${(bytes / 1e6).toFixed(bytes < 1e7 ? 2 : 0)} MB at $${table.storage_usd_per_gb_month.toFixed(2)} per GB-month, prices taken ${table.taken})`;
}
