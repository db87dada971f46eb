// A budget several runs share (a sweep's `max_cost_usd` / `max_tokens_total`): before each step a run
// asks it, with what the run has spent so far and its own prediction of the step; the step may start
// only when everything the runs have spent, the steps other runs have started and not yet recorded,
// and this step stay within the budget. A run with no step of its own yet is predicted from the
// others' steps (its first step costs about what theirs did).
import { budgetStopMessage, checkBudget, predictNextStep, type Budget, type BudgetCheck, type Spent } from './budget';

/** What a run's cost asks before each step (RunCost consults it after the run's own budget). */
export interface BudgetGate {
  /** `runSpent`: the run's spending so far, all its sessions; `predicted`: its own prediction of the next step (0 before its first) */
  check(run: string, runSpent: Spent, predicted: Spent): BudgetCheck;
  /** the run ended (its spending then, when known): what it reserved for a step it did not take is released */
  release(run: string, runSpent?: Spent): void;
}

export class SharedBudget implements BudgetGate {
  private readonly spentBy = new Map<string, Spent>();
  private readonly reserved = new Map<string, Spent>();
  private readonly stepUsd: number[] = [];
  private readonly stepTokens: number[] = [];
  private stopped: 'cost' | 'tokens' | undefined;

  /** `before`: each run's spending in earlier sessions (its metrics' cost/total_usd and usage/total_tokens) */
  constructor(
    readonly budget: Budget,
    before: ReadonlyMap<string, Spent> = new Map(),
  ) {
    for (const [run, s] of before) this.spentBy.set(run, { ...s });
  }

  /** Everything the runs have spent (estimate). */
  spent(): Spent {
    let usd = 0;
    let tokens = 0;
    for (const s of this.spentBy.values()) {
      usd += s.usd;
      tokens += s.tokens;
    }
    return { usd, tokens };
  }

  check(run: string, runSpent: Spent, predicted: Spent): BudgetCheck {
    const last = this.spentBy.get(run);
    // the run's step since its last check: the shared history a fresh run is predicted from
    if (this.reserved.has(run) && last) {
      this.stepUsd.push(runSpent.usd - last.usd);
      this.stepTokens.push(runSpent.tokens - last.tokens);
    }
    this.spentBy.set(run, { ...runSpent });
    this.reserved.delete(run);
    const next = {
      usd: predicted.usd > 0 ? predicted.usd : predictNextStep(this.stepUsd),
      tokens: predicted.tokens > 0 ? predicted.tokens : predictNextStep(this.stepTokens),
    };
    let inFlight = { usd: 0, tokens: 0 };
    for (const r of this.reserved.values()) inFlight = { usd: inFlight.usd + r.usd, tokens: inFlight.tokens + r.tokens };
    const spent = this.spent();
    const within = checkBudget(this.budget, spent, { usd: next.usd + inFlight.usd, tokens: next.tokens + inFlight.tokens });
    if (!within.ok) {
      this.stopped ??= within.reason;
      return { ok: false, reason: within.reason, message: `the sweep's budget: ${within.message}` };
    }
    this.reserved.set(run, next);
    return within;
  }

  release(run: string, runSpent?: Spent): void {
    this.reserved.delete(run);
    if (runSpent) this.spentBy.set(run, { ...runSpent });
  }

  /** Whether a step was refused: no new run is started after that. */
  get exhausted(): boolean {
    return this.stopped !== undefined;
  }

  /** The sweep's stop in budgetStopMessage's words (at what the runs spent in the end), or undefined. */
  stopMessage(): string | undefined {
    return this.stopped && budgetStopMessage(this.stopped, this.spent(), this.budget);
  }
}
