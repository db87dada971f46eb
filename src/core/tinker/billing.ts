// The service's own accounting (tinker-protocol.md §9.9): GET /api/v1/billing/usage/events answers
// token and event counts in hourly buckets, attributed by session id, without dollars. A window is
// hour-aligned and at most 14 days long; the counts arrive hours after the requests; only a key with
// billing access may read them. Parsed here at the edge; the run's reconciliation (runs/) sums them.
import * as z from 'zod';
import { emptyUsage, type UsageCounts } from './usage';

const count = z.number().finite().nonnegative();

export const BillingEventInfo = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('training'), token_count: count }),
  z.looseObject({ type: z.literal('sampling_prefill'), cached: z.boolean(), token_count: count }),
  z.looseObject({ type: z.literal('sampling_sample'), token_count: count }),
  z.looseObject({ type: z.literal('checkpoint'), count }),
  z.looseObject({ type: z.literal('storage'), gigabyte_hours: count }),
]);
export type BillingEventInfo = z.infer<typeof BillingEventInfo>;

/** An event type a newer service adds is kept as unknown (named in the report), not a parse failure. */
const AnyEventInfo = z.union([BillingEventInfo, z.looseObject({ type: z.string() })]);

export const BillingUsageEvent = z.looseObject({
  bucket_start: z.string(),
  bucket_end: z.string(),
  base_model: z.string().nullish(),
  user_id: z.string().nullish(),
  user_name: z.string().nullish(),
  session_id: z.string().nullish(),
  project_id: z.string().nullish(),
  event_info: AnyEventInfo,
});
export type BillingUsageEvent = z.infer<typeof BillingUsageEvent>;

export const BillingUsageResponse = z.looseObject({
  data: z.array(BillingUsageEvent),
  sessions: z.record(z.string(), z.unknown()).optional(),
});
export type BillingUsageResponse = z.infer<typeof BillingUsageResponse>;

const HOUR_MS = 3_600_000;
/** the route's longest window */
export const BILLING_WINDOW_MAX_MS = 14 * 24 * HOUR_MS;

export function floorHour(t: Date): Date {
  return new Date(Math.floor(t.getTime() / HOUR_MS) * HOUR_MS);
}

export function ceilHour(t: Date): Date {
  return new Date(Math.ceil(t.getTime() / HOUR_MS) * HOUR_MS);
}

/** [start, end) cut into hour-aligned windows of at most 14 days (the route refuses longer ones). */
export function billingWindows(start: Date, end: Date): Array<{ startingOn: Date; endingBefore: Date }> {
  const out: Array<{ startingOn: Date; endingBefore: Date }> = [];
  let from = floorHour(start).getTime();
  const to = ceilHour(end).getTime();
  while (from < to) {
    const next = Math.min(from + BILLING_WINDOW_MAX_MS, to);
    out.push({ startingOn: new Date(from), endingBefore: new Date(next) });
    from = next;
  }
  return out;
}

/** RFC 3339 without milliseconds, the form the route's examples use. */
export function rfc3339(t: Date): string {
  return t.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** What the events of some sessions add up to, in the meter's categories. */
export interface BillingUsageSum {
  tokens: UsageCounts;
  /** per base model (events without one under "") */
  byModel: Map<string, UsageCounts>;
  /** the events counted */
  events: number;
  /** the latest bucket end among them (how far the service's accounting reaches) */
  lastBucketEnd: Date | undefined;
  /** event types this client does not know, counted by type */
  unknownTypes: Record<string, number>;
}

/** Sums the token events of `sessionIds`; storage and checkpoint events are not tokens and are left out. */
export function sumBillingUsage(events: readonly BillingUsageEvent[], sessionIds: ReadonlySet<string>): BillingUsageSum {
  const tokens = emptyUsage();
  const byModel = new Map<string, UsageCounts>();
  const unknownTypes: Record<string, number> = {};
  let n = 0;
  let last: number | undefined;
  for (const e of events) {
    if (!e.session_id || !sessionIds.has(e.session_id)) continue;
    const parsed = BillingEventInfo.safeParse(e.event_info);
    if (!parsed.success) {
      unknownTypes[e.event_info.type] = (unknownTypes[e.event_info.type] ?? 0) + 1;
      continue;
    }
    const info = parsed.data;
    if (info.type === 'checkpoint' || info.type === 'storage') continue;
    const category: keyof UsageCounts = info.type === 'training' ? 'train' : info.type === 'sampling_sample' ? 'sampled' : info.cached ? 'cached_prefill' : 'prefill';
    const tokenCount: number = info.token_count;
    n++;
    tokens[category] += tokenCount;
    const model = e.base_model ?? '';
    let m = byModel.get(model);
    if (!m) byModel.set(model, (m = emptyUsage()));
    m[category] += tokenCount;
    const end = Date.parse(e.bucket_end);
    if (Number.isFinite(end)) last = Math.max(last ?? end, end);
  }
  return { tokens, byModel, events: n, lastBucketEnd: last !== undefined ? new Date(last) : undefined, unknownTypes };
}
