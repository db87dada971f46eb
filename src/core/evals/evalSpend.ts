// What an eval's sampling spends, per target, across every session of the eval (a resume adds to what
// the results folder recorded: usage.json), and the eval's budget (`max_cost_usd`, `max_tokens_total`):
// before a sample starts, what was spent plus the predicted cost of the samples in flight and this one
// must stay within it, or the sample is not started and the eval stops, its samples kept, to be
// resumed with a higher budget. Each target's sampling client counts into its own meter.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import { budgetStopMessage, checkBudget, type Budget, type BudgetCheck, type Spent } from '../cost/budget';
import type { EvalSummary } from './results';
import type { Problem } from '../data/types';
import { messagesTokens } from '../training/estimateShapes';
import { costOfUsage, type PriceTable } from '../cost/prices';
import { writeFileAtomicSync } from '../fs/atomic';
import { addUsage, emptyUsage, usageTokens, UsageMeter, type UsageCounts } from '../tinker/usage';
import { EvalResultsError } from './results';

export const USAGE_FILE = 'usage.json';

const Counts = z.strictObject({ train: z.number().nonnegative(), prefill: z.number().nonnegative(), cached_prefill: z.number().nonnegative(), sampled: z.number().nonnegative() });
const UsageFile = z.object({ targets: z.record(z.string(), Counts) });

/** The usage each target's sampling was billed for in earlier sessions (usage.json), parsed at the edge. */
export function readEvalUsage(outDir: string): Record<string, UsageCounts> {
  const file = path.join(outDir, USAGE_FILE);
  if (!fs.existsSync(file)) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new EvalResultsError(`${file}: ${e instanceof Error ? e.message : String(e)} (delete it to count this eval's spending from zero)`);
  }
  const r = UsageFile.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new EvalResultsError(`${file}: field ${i.path.join('.') || '(root)'}: ${i.message} (delete it to count this eval's spending from zero)`);
  }
  return r.data.targets;
}

export interface EvalSpendTarget {
  id: string;
  model: string;
}

/** An eval's spending: one meter per target, the earlier sessions' usage, the budget gate. */
export class EvalSpend {
  private readonly before: Record<string, UsageCounts>;
  private readonly meters = new Map<string, UsageMeter>();
  private inFlight = 0;
  /** samples finished in this session, and what they cost: the prediction's basis */
  private doneHere = 0;
  private stop: 'cost' | 'tokens' | undefined;
  private readonly budget: Budget;

  constructor(
    private readonly outDir: string,
    private readonly targets: readonly EvalSpendTarget[],
    private readonly prices: PriceTable,
    budget: Budget,
  ) {
    this.budget = { ...(budget.max_cost_usd !== undefined ? { max_cost_usd: budget.max_cost_usd } : {}), ...(budget.max_tokens_total !== undefined ? { max_tokens_total: budget.max_tokens_total } : {}) };
    this.before = readEvalUsage(outDir);
    for (const t of targets) this.meters.set(t.id, new UsageMeter());
  }

  /** The meter of a target's sampling client. */
  meter(targetId: string): UsageMeter {
    return this.meters.get(targetId)!;
  }

  /** A target's usage, all sessions. */
  usage(t: EvalSpendTarget): UsageCounts {
    const u = addUsage(emptyUsage(), this.before[t.id] ?? {});
    for (const c of this.meter(t.id).total().values()) addUsage(u, c);
    return u;
  }

  /** A target's usage and its estimated dollars, for its summary (cost_usd absent when the model is not priced). */
  summaryOf(t: EvalSpendTarget): { usage: UsageCounts; cost_usd?: number } {
    const usage = this.usage(t);
    const usd = this.prices ? costOfUsage(this.prices, t.model, usage) : undefined;
    return { usage, ...(usd !== undefined ? { cost_usd: usd } : {}) };
  }

  /** Everything spent so far, all targets and sessions. */
  spent(): Spent {
    let usd = 0;
    let tokens = 0;
    for (const t of this.targets) {
      const u = this.usage(t);
      tokens += usageTokens(u);
      usd += (this.prices && costOfUsage(this.prices, t.model, u)) || 0;
    }
    return { usd, tokens };
  }

  private spentHere(): Spent {
    const all = this.spent();
    const prior = this.targets.reduce(
      (a, t) => {
        const u = addUsage(emptyUsage(), this.before[t.id] ?? {});
        return { usd: a.usd + ((this.prices && costOfUsage(this.prices, t.model, u)) || 0), tokens: a.tokens + usageTokens(u) };
      },
      { usd: 0, tokens: 0 },
    );
    return { usd: all.usd - prior.usd, tokens: all.tokens - prior.tokens };
  }

  /** The shape of one sample before any has finished: its prompt prefilled and max_tokens sampled (an upper bound). */
  shapeOf(model: string, promptTokens: number, maxTokens: number): Spent {
    const u: UsageCounts = { ...emptyUsage(), prefill: promptTokens, sampled: maxTokens };
    return { usd: (this.prices && costOfUsage(this.prices, model, u)) || 0, tokens: usageTokens(u) };
  }

  /**
   * Whether `samples` more may start: spent + (in flight + these) × the cost of a sample (the mean of
   * this session's finished ones, else `shape`) must stay within the budget. A start is counted in
   * flight until `finished`; after the first refusal every later call refuses too.
   */
  mayStart(samples: number, shape: Spent): boolean {
    if (this.stop !== undefined) return false;
    if (this.budget.max_cost_usd === undefined && this.budget.max_tokens_total === undefined) {
      this.inFlight += samples;
      return true;
    }
    const here = this.spentHere();
    const per = this.doneHere > 0 ? { usd: here.usd / this.doneHere, tokens: here.tokens / this.doneHere } : shape;
    const k = this.inFlight + samples;
    const check: BudgetCheck = checkBudget(this.budget, this.spent(), { usd: per.usd * k, tokens: per.tokens * k });
    if (!check.ok) {
      this.stop = check.reason;
      return false;
    }
    this.inFlight += samples;
    return true;
  }

  /**
   * The tasks, each started only when the budget allows its `samples` (its shape: the problem's prompt
   * and max_tokens, until samples of this session have finished); a refused task does nothing.
   */
  gated(tasks: ReadonlyArray<() => Promise<void>>, shapes: ReadonlyArray<{ samples: number; model: string; problem: Problem }>, maxTokens: number): Array<() => Promise<void>> {
    return tasks.map((task, i) => async () => {
      const { samples, model, problem } = shapes[i]!;
      if (!this.mayStart(samples, this.shapeOf(model, messagesTokens(problem.messages, model), maxTokens))) return;
      try {
        await task();
      } finally {
        this.finished(samples);
      }
    });
  }

  /** `samples` that started have finished (recorded or failed); what they spent is in the meters. */
  finished(samples: number): void {
    this.inFlight -= samples;
    this.doneHere += samples;
    this.save();
  }

  /** Why the eval stopped before its budget, or undefined. The message is budgetStopMessage's, at the spending when the eval ended. */
  stopMessage(): string | undefined {
    return this.stop && budgetStopMessage(this.stop, this.spent(), this.budget);
  }

  /** Writes every target's usage, all sessions (usage.json). */
  save(): void {
    const targets = Object.fromEntries([...Object.entries(this.before), ...this.targets.map((t) => [t.id, this.usage(t)] as const)]);
    writeFileAtomicSync(path.join(this.outDir, USAGE_FILE), JSON.stringify({ targets }, null, 2) + '\n');
  }
}

/** The summary with each target's usage and cost, and the budget stop if there was one. */
export function withSpend(summary: EvalSummary, spend: EvalSpend): EvalSummary {
  const stop = spend.stopMessage();
  return {
    ...summary,
    targets: summary.targets.map((t) => ({ ...t, ...spend.summaryOf(t) })),
    ...(stop ? { budget_stop: stop } : {}),
  };
}
