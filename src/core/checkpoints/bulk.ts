// Runs one operation over many items with at most `concurrency` in flight, and reports each item's
// outcome: a failure is recorded and the rest go on.

export type ItemOutcome<T, R> = { item: T; ok: true; value: R } | { item: T; ok: false; error: Error };

export async function forEachBounded<T, R>(
  items: readonly T[],
  concurrency: number,
  run: (item: T) => Promise<R>,
  onSettled?: (outcome: ItemOutcome<T, R>, done: number) => void,
): Promise<Array<ItemOutcome<T, R>>> {
  if (!(concurrency >= 1)) throw new Error('concurrency must be at least 1');
  const out = new Array<ItemOutcome<T, R>>(items.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      const item = items[i]!;
      let outcome: ItemOutcome<T, R>;
      try {
        outcome = { item, ok: true, value: await run(item) };
      } catch (err) {
        outcome = { item, ok: false, error: err instanceof Error ? err : new Error(String(err)) };
      }
      out[i] = outcome;
      onSettled?.(outcome, ++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return out;
}
