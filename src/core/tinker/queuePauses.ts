// The time a client's requests spend waiting on a paused queue: the service's own pause (a
// try_again with paused_capacity / paused_rate_limit) or the client's pause on HTTP 402 (billing).
// One per service client; a run owns its service client, so what is counted here is the run's. The
// step's `time/queue_paused` is the wall time during which at least one request was paused (several
// requests paused together count once, so it never exceeds the step's time/total).

/** The client's own pause on 402, reported like the service's queue states. */
export const PAUSED_BILLING = 'paused_billing';

export interface QueuePause {
  /** paused_capacity | paused_rate_limit | paused_billing (or a newer state the service sends) */
  queueState: string;
  reason?: string;
  /** when it began (ms since the epoch), for "for 42 s so far" */
  since: number;
}

export class QueuePauses {
  private readonly open = new Map<string, QueuePause>();
  /** monotonic time (s) the current paused stretch began, or undefined when nothing is paused */
  private stretchStart: number | undefined;
  private counted = 0;
  private readonly listeners = new Set<(current: QueuePause | undefined) => void>();

  constructor(
    private readonly clock: () => number = () => performance.now() / 1000,
    private readonly wallClock: () => number = Date.now,
  ) {}

  /** `key`'s request is paused (again, or with a new state: the pause keeps its start). */
  pause(key: string, queueState: string, reason?: string): void {
    const was = this.open.get(key);
    if (was && was.queueState === queueState && was.reason === reason) return;
    this.open.set(key, { queueState, ...(reason !== undefined ? { reason } : {}), since: was?.since ?? this.wallClock() });
    this.stretchStart ??= this.clock();
    this.changed();
  }

  /** `key`'s request is no longer paused (active again, answered, failed or given up). */
  resume(key: string): void {
    if (!this.open.delete(key)) return;
    if (this.open.size === 0 && this.stretchStart !== undefined) {
      this.counted += this.clock() - this.stretchStart;
      this.stretchStart = undefined;
    }
    this.changed();
  }

  isPaused(key: string): boolean {
    return this.open.has(key);
  }

  /** Seconds paused since the last take (a pause still going counts up to now), and starts a new count. */
  take(): number {
    const now = this.clock();
    let s = this.counted;
    if (this.stretchStart !== undefined) {
      s += now - this.stretchStart;
      this.stretchStart = now;
    }
    this.counted = 0;
    return s;
  }

  /** The pause to show: the longest-running one, or undefined when every request is active. */
  current(): QueuePause | undefined {
    let out: QueuePause | undefined;
    for (const p of this.open.values()) if (!out || p.since < out.since) out = p;
    return out;
  }

  /** Calls `listener` with current() whenever a pause begins, changes or ends; returns the unsubscribe. */
  onChange(listener: (current: QueuePause | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    const c = this.current();
    for (const l of [...this.listeners]) {
      try {
        l(c);
      } catch {
        // a listener's failure is its own; the accounting goes on
      }
    }
  }
}

/** "paused: rate limit — for 42 s so far" (the service gives no estimate of when it resumes). */
export function describeQueuePause(p: QueuePause, now: number = Date.now()): string {
  const what =
    p.queueState === 'paused_rate_limit' ? 'rate limit' : p.queueState === 'paused_capacity' ? 'capacity' : p.queueState === PAUSED_BILLING ? 'billing' : p.queueState.replace(/^paused_/, '').replace(/_/g, ' ');
  return `paused: ${what} — for ${Math.max(0, Math.round((now - p.since) / 1000))} s so far`;
}
