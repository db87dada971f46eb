// Span timings of one iteration as the cookbook logs them (grpo-reference §3.1): a span seen once
// gives `time/<span>`; a span seen several times gives `time/<span>:total|:count|:mean|:max`.

/** One line's span of timing_spans.jsonl; wall times in seconds from the iteration's earliest span. */
export interface TimingSpan {
  name: string;
  duration: number;
  wall_start: number;
  wall_end: number;
}

export class SpanTimer {
  private readonly spans = new Map<string, number[]>();
  private readonly timeline: Array<{ name: string; start: number; duration: number }> = [];

  constructor(private readonly now: () => number = () => performance.now() / 1000) {}

  /** Runs `fn` and records its wall time (seconds) under `name`, also when it throws. */
  async time<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const t0 = this.now();
    try {
      return await fn();
    } finally {
      const duration = this.now() - t0;
      this.add(name, duration);
      this.timeline.push({ name, start: t0, duration });
    }
  }

  /** The timed spans in the order they ended, for timing_spans.jsonl. */
  timingSpans(): TimingSpan[] {
    const origin = Math.min(...this.timeline.map((s) => s.start));
    return this.timeline.map((s) => ({ name: s.name, duration: s.duration, wall_start: s.start - origin, wall_end: s.start - origin + s.duration }));
  }

  add(name: string, seconds: number): void {
    const list = this.spans.get(name);
    if (list) list.push(seconds);
    else this.spans.set(name, [seconds]);
  }

  /** The `time/…` metrics of every span recorded so far, in first-seen order. */
  metrics(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, list] of this.spans) {
      if (list.length === 1) {
        out[`time/${name}`] = list[0]!;
        continue;
      }
      const total = list.reduce((a, b) => a + b, 0);
      out[`time/${name}:total`] = total;
      out[`time/${name}:count`] = list.length;
      out[`time/${name}:mean`] = total / list.length;
      out[`time/${name}:max`] = Math.max(...list);
    }
    return out;
  }
}
