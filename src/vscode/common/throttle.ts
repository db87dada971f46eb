// Coalesces bursts of calls (a run reports progress per sample) into at most one call per interval,
// always including a final call after the burst, so views refresh without flooding the workbench.

export type Throttled = (() => void) & { dispose(): void };

export function throttle(fn: () => void, intervalMs: number): Throttled {
  let last = 0;
  let timer: NodeJS.Timeout | undefined;
  const call = () => {
    timer = undefined;
    last = Date.now();
    fn();
  };
  const throttled = (): void => {
    if (timer) return;
    const wait = last + intervalMs - Date.now();
    if (wait <= 0) call();
    else timer = setTimeout(call, wait);
  };
  return Object.assign(throttled, { dispose: () => clearTimeout(timer) });
}
