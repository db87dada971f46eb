// The Usage reconciliation: a run's own token counts (the usage/* keys of its metrics.jsonl, summed
// over its steps) set against the service's accounting of the run's sessions (the billing route,
// tinker/billing.ts). The service reports hours late, reads only with billing access and answers
// hour-aligned windows of at most 14 days; each of those is said plainly rather than shown as zeros.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { METRIC } from '../../protocol/metricKeys';
import { billingWindows, rfc3339, sumBillingUsage, type BillingUsageEvent, type BillingUsageResponse, type BillingUsageSum } from '../tinker/billing';
import { AuthenticationError, NotFoundError, PermissionDeniedError, TinkerApiError } from '../tinker/errors';
import { emptyUsage, USAGE_CATEGORIES, usageTokens, type UsageCounts } from '../tinker/usage';
import { errorMessage } from '../errors';
import { metricsFile, readMetricsRows } from './runDirectory';
import { readRunSessions, type RunSession } from './runSessions';

/** What the reconciliation needs of a client (ServiceClient has it). */
export interface BillingReader {
  billingUsageEvents(startingOn: Date, endingBefore: Date, signal?: AbortSignal): Promise<BillingUsageResponse>;
}

const USAGE_KEY: Record<keyof UsageCounts, string> = {
  train: METRIC.usageTrain,
  prefill: METRIC.usagePrefill,
  cached_prefill: METRIC.usageCachedPrefill,
  sampled: METRIC.usageSampled,
};

export const CATEGORY_LABEL: Record<keyof UsageCounts, string> = {
  train: 'training',
  prefill: 'prefill',
  cached_prefill: 'cached prefill',
  sampled: 'sampled',
};

/** The run's own usage: each category's per-step tokens summed over its steps (one row per step, resumes merged). */
export async function runOwnUsage(runDir: string): Promise<{ tokens: UsageCounts; steps: number; stepsWithUsage: number }> {
  const rows = await readMetricsRows(runDir);
  const tokens = emptyUsage();
  let withUsage = 0;
  for (const r of rows) {
    let any = false;
    for (const c of USAGE_CATEGORIES) {
      const v = r[USAGE_KEY[c]];
      if (typeof v === 'number' && Number.isFinite(v)) {
        tokens[c] += v;
        any = true;
      }
    }
    if (any) withUsage++;
  }
  return { tokens, steps: rows.length, stepsWithUsage: withUsage };
}

export type UnavailableReason = 'no-sessions' | 'no-billing-access' | 'no-billing-route' | 'window-refused' | 'not-yet';

export type Reconciliation =
  | {
      ok: true;
      run: string;
      sessions: RunSession[];
      window: { startingOn: Date; endingBefore: Date };
      own: UsageCounts;
      service: UsageCounts;
      serviceByModel: BillingUsageSum['byModel'];
      events: number;
      /** what limits the comparison (the service's counts not reaching the run's end, unknown event types) */
      notes: string[];
    }
  | { ok: false; run: string; reason: UnavailableReason; message: string; own?: UsageCounts };

const HOUR_MS = 3_600_000;

function hoursAgo(t: Date, now: Date): string {
  const h = (now.getTime() - t.getTime()) / HOUR_MS;
  return h < 1 ? 'less than an hour ago' : `${Math.round(h)} h ago`;
}

/** When the run last wrote a step (metrics.jsonl's time), else undefined. */
async function lastActivity(runDir: string): Promise<Date | undefined> {
  try {
    return (await fs.stat(metricsFile(runDir))).mtime;
  } catch {
    return undefined;
  }
}

/**
 * Sums the service's counts for the run's sessions over the hours the run ran (from its first
 * session's start to its last step, hour-aligned, cut into 14-day windows) and sets them against
 * the run's own. Errors the service answers become a plain reason, not a throw; a connection
 * failure still throws (the caller says it as for any request).
 */
export async function reconcileRunUsage(runDir: string, client: BillingReader, o: { now?: Date; signal?: AbortSignal } = {}): Promise<Reconciliation> {
  const now = o.now ?? new Date();
  const run = path.basename(runDir);
  const { sessions } = await readRunSessions(runDir);
  const own = await runOwnUsage(runDir);
  if (sessions.length === 0)
    return { ok: false, run, reason: 'no-sessions', own: own.tokens, message: `${run} records no Tinker session (its sessions.jsonl is missing or empty): only runs started since Tinker Studio records sessions can be reconciled with the service's usage` };
  const start = new Date(Math.min(...sessions.map((s) => Date.parse(s.started_at))));
  const lastStep = await lastActivity(runDir);
  const end = new Date(Math.min(now.getTime(), Math.max(start.getTime(), lastStep?.getTime() ?? start.getTime(), ...sessions.map((s) => Date.parse(s.started_at))) + 1));
  const windows = billingWindows(start, end);
  const events: BillingUsageEvent[] = [];
  for (const w of windows) {
    try {
      events.push(...(await client.billingUsageEvents(w.startingOn, w.endingBefore, o.signal)).data);
    } catch (err) {
      const said = unavailable(err, w, run);
      if (!said) throw err;
      return { ...said, own: own.tokens };
    }
  }
  const ids = new Set(sessions.map((s) => s.session_id));
  const sum = sumBillingUsage(events, ids);
  const window = { startingOn: windows[0]!.startingOn, endingBefore: windows.at(-1)!.endingBefore };
  const lastAt = lastStep ?? start;
  if (sum.events === 0)
    return {
      ok: false,
      run,
      reason: 'not-yet',
      own: own.tokens,
      message: `not yet available — the service reports usage hours late: it has no usage of ${run}'s session${ids.size === 1 ? '' : 's'} (${[...ids].join(', ')}) between ${rfc3339(window.startingOn)} and ${rfc3339(window.endingBefore)} yet; the run's last step was ${hoursAgo(lastAt, now)}. Try again in a few hours.`,
    };
  const notes: string[] = [];
  if (sum.lastBucketEnd && lastStep && sum.lastBucketEnd.getTime() < lastStep.getTime())
    notes.push(`the service's counts reach ${rfc3339(sum.lastBucketEnd)}, the run's last step was at ${rfc3339(lastStep)}: the last hours may not be counted yet (the service reports hours late)`);
  for (const [type, n] of Object.entries(sum.unknownTypes)) notes.push(`${n} event(s) of a type this version does not know ("${type}") were left out`);
  return { ok: true, run, sessions, window, own: own.tokens, service: sum.tokens, serviceByModel: sum.byModel, events: sum.events, notes };
}

/** The service's refusals as plain reasons; undefined for errors that are not an answer of the route. */
function unavailable(err: unknown, w: { startingOn: Date; endingBefore: Date }, run: string): Extract<Reconciliation, { ok: false }> | undefined {
  if (err instanceof PermissionDeniedError || err instanceof AuthenticationError)
    return {
      ok: false,
      run,
      reason: 'no-billing-access',
      message: `the service's usage cannot be read with this API key (HTTP ${err.status}: no billing access): reading usage needs a key with billing access to the organisation; ask its admin, or compare with the Tinker console`,
    };
  if (err instanceof NotFoundError)
    return { ok: false, run, reason: 'no-billing-route', message: `this server has no billing route (HTTP 404 on /api/v1/billing/usage/events): the embedded engine and other Tinker-compatible servers keep no usage; reconcile runs made on Tinker's service` };
  if (err instanceof TinkerApiError && err.status >= 400 && err.status < 500)
    return {
      ok: false,
      run,
      reason: 'window-refused',
      message: `the service refused the window ${rfc3339(w.startingOn)} – ${rfc3339(w.endingBefore)} (HTTP ${err.status}: ${errorMessage(err)}): it answers hour-aligned windows of at most 14 days, and usage older than it keeps cannot be read`,
    };
  return undefined;
}

function int(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** The reconciliation as a text table (the CLI prints it; the command shows it in a document). */
export function reconciliationText(r: Reconciliation): string {
  if (!r.ok) {
    const own = r.own ? `\nThe run's own count: ${USAGE_CATEGORIES.map((c) => `${CATEGORY_LABEL[c]} ${int(r.own![c])}`).join(', ')} (${int(usageTokens(r.own))} tokens).` : '';
    return `Usage of ${r.run}: cannot be reconciled now: ${r.message}${own}\n`;
  }
  const rows: string[][] = [['category', 'run (own count)', 'service', 'difference']];
  const diff = (a: number, b: number) => (a === b ? '0' : `${b - a > 0 ? '+' : ''}${int(b - a)}${a > 0 ? ` (${(((b - a) / a) * 100).toFixed(1)} %)` : ''}`);
  for (const c of USAGE_CATEGORIES) rows.push([CATEGORY_LABEL[c], int(r.own[c]), int(r.service[c]), diff(r.own[c], r.service[c])]);
  rows.push(['total', int(usageTokens(r.own)), int(usageTokens(r.service)), diff(usageTokens(r.own), usageTokens(r.service))]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const table = rows.map((row) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')).join('\n');
  const models = [...r.serviceByModel.keys()].filter(Boolean).sort();
  return [
    `Usage of ${r.run}: its own count against the service's (tokens; ${r.events} event(s) of session${r.sessions.length === 1 ? '' : 's'} ${r.sessions.map((s) => s.session_id).join(', ')}, ${rfc3339(r.window.startingOn)} – ${rfc3339(r.window.endingBefore)})`,
    table,
    ...(models.length ? [`models the service counted: ${models.join(', ')}`] : []),
    ...r.notes.map((n) => `note: ${n}`),
    '',
  ].join('\n');
}
