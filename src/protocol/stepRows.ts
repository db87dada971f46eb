// The one rule every reader of metrics.jsonl follows (the views, the CLI's summary, the agent report):
// one row per step. Lines of the same step merge (later values win); a line whose step is lower than
// one already read means the run was resumed from an earlier checkpoint and trained those steps
// again — the re-run rows replace the lost ones, so the rows from that step on are dropped first.

/** Adds one line (`step`, `row`) to `rows` (step → merged row) by the rule above. */
export function addStepRow<T extends object>(rows: Map<number, T>, step: number, row: T): void {
  let last = -Infinity;
  for (const s of rows.keys()) if (s > last) last = s;
  if (step < last) for (const s of [...rows.keys()]) if (s >= step) rows.delete(s);
  rows.set(step, { ...(rows.get(step) ?? {}), ...row } as T);
}
