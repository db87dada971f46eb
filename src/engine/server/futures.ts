// The engine's futures: every asynchronous request gets a request id at once; its result is fetched
// with retrieve_future long-polling. Ids carry the server's boot id, so after a restart an id from an
// earlier run is recognisably expired (410: "resubmit") rather than unknown (404).
import { randomBytes } from 'node:crypto';
import type { ForwardBackwardOutput, SampleResponse } from '../../core/tinker/types';

export type FutureResult =
  | { kind: 'json'; body: Record<string, unknown> }
  | { kind: 'forward_backward'; output: ForwardBackwardOutput }
  | { kind: 'sample'; response: SampleResponse };

export type FutureState =
  | { state: 'pending' }
  | { state: 'done'; result: FutureResult }
  | { state: 'failed'; error: string; category: 'user' | 'server' | 'unknown' };

interface Entry {
  value: FutureState;
  settledAt?: number;
  waiters: Array<() => void>;
}

export class FutureStore {
  readonly bootId = randomBytes(4).toString('hex');
  private counter = 0;
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly retentionMs = 30 * 60_000) {}

  create(): string {
    const id = `${this.bootId}-${++this.counter}`;
    this.entries.set(id, { value: { state: 'pending' }, waiters: [] });
    return id;
  }

  /** Runs `work` and settles the future with its outcome. */
  track(id: string, work: () => Promise<FutureResult>): void {
    work().then(
      (result) => this.settle(id, { state: 'done', result }),
      (err: unknown) => {
        const e = err as Error & { category?: 'user' | 'server' };
        this.settle(id, { state: 'failed', error: e?.message ?? String(err), category: e?.category ?? 'user' });
      },
    );
  }

  settle(id: string, value: FutureState): void {
    const entry = this.entries.get(id);
    if (!entry || entry.value.state !== 'pending') return;
    entry.value = value;
    entry.settledAt = Date.now();
    for (const w of entry.waiters.splice(0)) w();
    this.prune();
  }

  /** requests accepted since the engine started */
  issuedCount(): number {
    return this.counter;
  }

  /** requests accepted and not settled yet: work the engine is still doing */
  pendingCount(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.value.state === 'pending') n++;
    return n;
  }

  /** 'unknown' for ids never issued by any boot of this engine; 'expired' for ids of another boot or dropped. */
  lookup(id: string): FutureState | 'expired' | 'unknown' {
    const entry = this.entries.get(id);
    if (entry) return entry.value;
    const [boot, n] = id.split('-');
    if (boot && boot !== this.bootId && /^[0-9a-f]{8}$/.test(boot)) return 'expired';
    if (boot === this.bootId && n !== undefined && Number(n) <= this.counter) return 'expired';
    return 'unknown';
  }

  /** Waits until the future settles or `holdMs` passes; returns its state then. */
  async wait(id: string, holdMs: number, signal?: AbortSignal): Promise<FutureState | 'expired' | 'unknown'> {
    const now = this.lookup(id);
    if (now === 'expired' || now === 'unknown' || now.state !== 'pending') return now;
    const entry = this.entries.get(id)!;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, holdMs);
      signal?.addEventListener('abort', done, { once: true });
      entry.waiters.push(done);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
    });
    return this.lookup(id);
  }

  private prune(): void {
    const cutoff = Date.now() - this.retentionMs;
    for (const [id, e] of this.entries) if (e.settledAt !== undefined && e.settledAt < cutoff) this.entries.delete(id);
  }
}

/** An Error whose future is reported with category "user" (bad input) or "server". */
export class FutureError extends Error {
  constructor(
    message: string,
    readonly category: 'user' | 'server' = 'user',
  ) {
    super(message);
  }
}
