// The supervised kinds' learning-rate schedules (SFT, DPO) (grpo-reference §6.2), with an optional linear warmup before them.
export type LrSchedule = 'linear' | 'cosine' | 'constant';

/** The multiplier at 0-based `step` of `totalSteps` (linear 1 − s/T, cosine ½(1 + cos πs/T), constant 1). */
export function lrMultiplier(schedule: LrSchedule, step: number, totalSteps: number): number {
  if (totalSteps <= 0) return 1;
  const x = step / totalSteps;
  if (schedule === 'linear') return Math.max(0, 1 - x);
  if (schedule === 'cosine') return 0.5 * (1 + Math.cos(Math.PI * Math.min(1, x)));
  return 1;
}

/**
 * The learning rate of `step`: during the first `warmupSteps` steps lr·(step+1)/warmupSteps; after it
 * the schedule runs over the remaining steps, starting at its full value.
 */
export function learningRateAt(lr: number, schedule: LrSchedule, step: number, totalSteps: number, warmupSteps = 0): number {
  if (step < warmupSteps) return (lr * (step + 1)) / warmupSteps;
  return lr * lrMultiplier(schedule, step - warmupSteps, totalSteps - warmupSteps);
}
