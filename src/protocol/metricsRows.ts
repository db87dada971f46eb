// metrics.jsonl rows merged into one row per step: the rule every reader follows (the run views, the
// metrics panel's webview, the CLI's end-of-run table, the agent's report, the breakdown). Pure, so
// the webview imports it too.

/**
 * The row of a step once a later row for it arrives; `step` itself is not a metric. A later row that
 * repeats any metric key of the step's row is the step logged again (a resumed run re-ran it) and
 * replaces the earlier row whole, so exactly one run of the step remains and nothing of the abandoned
 * run lingers. A later row whose keys are all new adds them to the step's row: the Python cookbook's
 * async mode logs a step's evaluation as a line of its own, after the step's training line.
 */
export function mergeStepRow<R extends object>(earlier: R | undefined, later: R): R {
  if (earlier === undefined) return later;
  for (const key of Object.keys(later)) {
    if (key !== 'step' && Object.hasOwn(earlier, key)) return later;
  }
  return { ...earlier, ...later };
}

/** Rows in file order → one row per step (mergeStepRow), in step order. */
export function mergeMetrics<R extends { step: number }>(records: readonly R[]): R[] {
  const byStep = new Map<number, R>();
  for (const r of records) byStep.set(r.step, mergeStepRow(byStep.get(r.step), r));
  return [...byStep.values()].sort((a, b) => a.step - b.step);
}
