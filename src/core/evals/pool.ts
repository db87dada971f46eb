// A bounded pool for an eval's requests (sampling, forward passes): all targets' tasks interleave under one limit.

/** Runs `tasks` with at most `limit` in flight; the first failure stops handing out new ones and is thrown. */
export async function runPool(tasks: Array<() => Promise<void>>, limit: number, signal?: AbortSignal): Promise<void> {
  let next = 0;
  let failed: unknown;
  const worker = async () => {
    while (failed === undefined && next < tasks.length) {
      if (signal?.aborted) return;
      const t = tasks[next++]!;
      try {
        await t();
      } catch (e) {
        failed ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  if (failed !== undefined) throw failed;
}
