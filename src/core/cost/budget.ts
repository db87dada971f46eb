// Budgets: a run (or a sweep's runs together, or an eval) stops before a step that would cross its
// `max_cost_usd` or `max_tokens_total`. The next step's cost is predicted from the last steps; a step
// that would cross is not started, and the run ends like a cancel — a checkpoint and a resume point —
// with a message that says where it stopped and how to go on.

export interface Budget {
  max_cost_usd?: number;
  max_tokens_total?: number;
}

export interface Spent {
  usd: number;
  tokens: number;
}

/** The default of `tinker.confirmCostAboveUsd`: a job estimated above this asks before it starts. */
export const DEFAULT_CONFIRM_COST_ABOVE_USD = 5;

/** How many of the last steps the prediction looks at. */
export const PREDICT_FROM_LAST = 3;

/**
 * The predicted cost (or tokens) of the next step: the largest of the last PREDICT_FROM_LAST steps, so
 * a budget is not crossed by a step that is a little longer than the mean; 0 before the first step
 * (the first step of a run always starts unless the budget is already spent).
 */
export function predictNextStep(history: readonly number[]): number {
  const last = history.slice(-PREDICT_FROM_LAST);
  return last.length ? Math.max(...last) : 0;
}

export type BudgetCheck = { ok: true } | { ok: false; reason: 'cost' | 'tokens'; message: string };

/** Whether the next step may start: spent + predicted must stay within every limit set. */
export function checkBudget(budget: Budget | undefined, spent: Spent, predicted: Spent): BudgetCheck {
  if (budget?.max_cost_usd !== undefined && spent.usd + predicted.usd > budget.max_cost_usd) {
    return { ok: false, reason: 'cost', message: budgetStopMessage('cost', spent, budget) };
  }
  if (budget?.max_tokens_total !== undefined && spent.tokens + predicted.tokens > budget.max_tokens_total) {
    return { ok: false, reason: 'tokens', message: budgetStopMessage('tokens', spent, budget) };
  }
  return { ok: true };
}

/** "stopped at $4.92 of $5.00; resume with a higher budget to continue" (the wording the run's log, status and notification share). */
export function budgetStopMessage(reason: 'cost' | 'tokens', spent: Spent, budget: Budget): string {
  if (reason === 'cost') return `stopped at $${spent.usd.toFixed(2)} of $${(budget.max_cost_usd ?? 0).toFixed(2)} (estimate); resume with a higher budget to continue`;
  return `stopped at ${spent.tokens.toLocaleString('en-US')} of ${(budget.max_tokens_total ?? 0).toLocaleString('en-US')} tokens; resume with a higher budget to continue`;
}
