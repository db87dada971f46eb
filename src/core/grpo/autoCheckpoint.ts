// Auto-checkpoint on reward: keeps the best policy of a run. Each iteration the tracker sees the
// train reward (smoothed by an exponential moving average) and, when evaluated, the holdout reward;
// when the watched value reaches a new best above the threshold after the minimum number of
// iterations, the loop saves a named state + sampler checkpoint of the weights that earned it.
import { checkpointName } from '../runs/loopRuntime';
import type { CheckpointRecord } from '../runs/runDirectory';

export interface AutoCheckpointConfig {
  /** which reward is watched: the smoothed train reward or the holdout (test) reward */
  metric: 'train' | 'holdout';
  /** only rewards above this count */
  threshold: number;
  /** no auto-checkpoint before this many updates have been applied */
  minIterations: number;
  /** EMA factor of the train reward: smoothed = s·previous + (1−s)·reward (0 = no smoothing) */
  smoothing: number;
  /** checkpoint names are `<prefix>-<step>` */
  prefix: string;
}

/** The record field that marks an auto-checkpoint and carries the reward it was saved for. */
export const AUTO_FIELD = 'auto_checkpoint';

export interface AutoDecision {
  /** the value that set the new best */
  value: number;
  name: string;
  extra: Record<string, unknown>;
}

export class AutoCheckpointTracker {
  private smoothed: number | undefined;
  private best: number | undefined;

  constructor(
    private readonly c: AutoCheckpointConfig,
    /** the run's earlier records: a resumed run keeps the best it already saved */
    prior: readonly CheckpointRecord[] = [],
  ) {
    for (const r of prior) {
      const a: unknown = r[AUTO_FIELD];
      if (typeof a === 'object' && a !== null && (a as { metric?: unknown }).metric === c.metric) {
        const v = (a as { value?: unknown }).value;
        if (typeof v === 'number' && Number.isFinite(v) && (this.best === undefined || v > this.best)) this.best = v;
      }
    }
  }

  get bestValue(): number | undefined {
    return this.best;
  }

  /**
   * Step `step` (the weights after `step` updates) scored `train` and maybe `holdout`; returns the
   * checkpoint to save when this is a new best above the threshold after the minimum iterations.
   */
  observe(step: number, rewards: { train?: number; holdout?: number }): AutoDecision | undefined {
    if (rewards.train !== undefined && Number.isFinite(rewards.train)) {
      this.smoothed = this.smoothed === undefined ? rewards.train : this.c.smoothing * this.smoothed + (1 - this.c.smoothing) * rewards.train;
    }
    const value = this.c.metric === 'train' ? (rewards.train !== undefined ? this.smoothed : undefined) : rewards.holdout;
    if (value === undefined || !Number.isFinite(value)) return undefined;
    if (step < this.c.minIterations || !(value > this.c.threshold)) return undefined;
    if (this.best !== undefined && !(value > this.best)) return undefined;
    this.best = value;
    return {
      value,
      name: `${this.c.prefix}-${checkpointName(step)}`,
      extra: { [AUTO_FIELD]: { metric: this.c.metric, value, step } },
    };
  }
}
