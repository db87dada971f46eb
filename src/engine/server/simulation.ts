// The engine's one service simulation, for tests and demos: what the Tinker service does to a client
// and the engine otherwise never does — a paused queue (try_again with paused_capacity /
// paused_rate_limit and a reason) and refusals (429 rate limit, 402 billing) — on a schedule counted in
// requests, so a test gets the same answers every time and never waits on a clock. Requests are
// counted per request type (the SDK's names: ForwardBackward, Sample, OptimStep, …): a submission by
// its route, a poll by its x-tinker-request-type header. Off unless the engine is given a simulation.
import type * as http from 'node:http';
import * as z from 'zod';
import { HttpError } from './http';

const REQUEST_TYPES = ['CreateModel', 'ForwardBackward', 'Forward', 'OptimStep', 'SaveWeights', 'LoadWeights', 'SaveWeightsForSampler', 'Sample', 'UnloadModel'] as const;
type SimRequestType = (typeof REQUEST_TYPES)[number];

/** Which requests of a type a rule hits: the k-th ones listed (1-based), or every n-th. */
const Schedule = {
  request: z.enum(REQUEST_TYPES),
  at: z.array(z.number().int().positive()).optional(),
  every: z.number().int().positive().optional(),
};
const oneSchedule = (r: { at?: number[]; every?: number }) => (r.at === undefined) !== (r.every === undefined);
const scheduleMessage = { message: 'give exactly one of "at" (the k-th requests, 1-based) or "every" (every n-th request)' };

export const ServiceSimulationSchema = z
  .object({
    /** the first `polls` polls of a hit request answer try_again with this queue state, each held `hold_ms` (a paused queue's long poll) */
    pauses: z
      .array(
        z
          .object({
            ...Schedule,
            queue_state: z.enum(['paused_capacity', 'paused_rate_limit']),
            reason: z.string().optional(),
            polls: z.number().int().positive(),
            hold_ms: z.number().int().nonnegative().max(60_000).default(200),
          })
          .strict()
          .refine(oneSchedule, scheduleMessage),
      )
      .default([]),
    /** a hit request is refused with `status` `times` times in a row (its retries count as the same request) */
    refusals: z
      .array(
        z
          .object({
            ...Schedule,
            status: z.union([z.literal(429), z.literal(402)]),
            /** on the submission (default) or on the result's polls */
            on: z.enum(['submit', 'poll']).default('submit'),
            times: z.number().int().positive().default(1),
            /** the Retry-After a 429 carries, in ms (the client waits it out) */
            retry_after_ms: z.number().int().nonnegative().max(60_000).default(10),
          })
          .strict()
          .refine(oneSchedule, scheduleMessage),
      )
      .default([]),
  })
  .strict();

export type ServiceSimulationInput = z.input<typeof ServiceSimulationSchema>;
type Simulation = z.output<typeof ServiceSimulationSchema>;

/** The environment variable the engine process reads a simulation from (JSON), for tests that start it as a process. */
export const SIMULATION_ENV = 'TINKER_ENGINE_SIMULATION';

/** Parses a simulation given as JSON text; an error names the field. */
export function parseServiceSimulation(text: string, where: string): ServiceSimulationInput {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${where}: the service simulation is not JSON: ${(err as Error).message}`);
  }
  const r = ServiceSimulationSchema.safeParse(value);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new Error(`${where}: service simulation ${i.path.join('.') || '(top level)'}: ${i.message}`);
  }
  return value as ServiceSimulationInput;
}

const SUBMISSION_TYPES: Record<string, SimRequestType> = {
  create_model: 'CreateModel',
  forward_backward: 'ForwardBackward',
  forward: 'Forward',
  optim_step: 'OptimStep',
  save_weights: 'SaveWeights',
  load_weights: 'LoadWeights',
  save_weights_for_sampler: 'SaveWeightsForSampler',
  asample: 'Sample',
  unload_model: 'UnloadModel',
};

/** The live schedule: counts requests and decides who is paused or refused. */
export class ServiceSimulator {
  private readonly sim: Simulation;
  private readonly submitted = new Map<string, number>();
  private readonly polled = new Map<string, number>();
  /** request id → the pause it is in and how many paused polls are left */
  private readonly paused = new Map<string, { rule: Simulation['pauses'][number]; left: number }>();
  /** request ids already counted for pauses and poll refusals */
  private readonly seen = new Set<string>();
  /** request id → the poll refusal it is in and how many are left */
  private readonly duePoll = new Map<string, { rule: Simulation['refusals'][number]; left: number }>();

  constructor(input: ServiceSimulationInput) {
    this.sim = ServiceSimulationSchema.parse(input);
  }

  /**
   * A submission's refusal, if its schedule says so (called before its body is read). Only accepted
   * submissions advance the count, so the k-th request is refused `times` times and its retry after
   * that is accepted as the k-th.
   */
  refuseSubmission(req: http.IncomingMessage, path: string): void {
    const m = /^\/api\/v1\/([a-z_]+)$/.exec(path);
    const type = m ? SUBMISSION_TYPES[m[1]!] : undefined;
    if (!type || req.method !== 'POST') return;
    let due = this.dueSubmission.get(type);
    if (!due) {
      const k = (this.submitted.get(type) ?? 0) + 1;
      const rule = this.sim.refusals.find((r) => r.on === 'submit' && hits(r, type, k));
      this.dueSubmission.set(type, (due = { rule, left: rule?.times ?? 0 }));
    }
    if (due.rule && due.left > 0) {
      due.left--;
      refuse(due.rule, `${type} request`);
    }
    this.dueSubmission.delete(type);
    this.count(this.submitted, type);
  }

  private readonly dueSubmission = new Map<string, { rule: Simulation['refusals'][number] | undefined; left: number }>();

  /** What a poll of `requestId` gets before the engine looks at its result: a refusal, a paused answer, or nothing. */
  async poll(requestId: string, typeHeader: string | undefined): Promise<{ queue_state: string; queue_state_reason?: string } | undefined> {
    const type = REQUEST_TYPES.find((t) => t === typeHeader);
    if (type && !this.seen.has(requestId)) {
      this.seen.add(requestId);
      const k = this.count(this.polled, type);
      const pause = this.sim.pauses.find((r) => hits(r, type, k));
      if (pause) this.paused.set(requestId, { rule: pause, left: pause.polls });
      const rule = this.sim.refusals.find((r) => r.on === 'poll' && hits(r, type, k));
      if (rule) this.duePoll.set(requestId, { rule, left: rule.times });
    }
    const due = this.duePoll.get(requestId);
    if (due) {
      if (--due.left <= 0) this.duePoll.delete(requestId);
      refuse(due.rule, `the result of ${requestId}`);
    }
    const p = this.paused.get(requestId);
    if (!p) return undefined;
    if (--p.left <= 0) this.paused.delete(requestId);
    // a paused queue's long poll: held, then answered "not yet"
    if (p.rule.hold_ms > 0) await new Promise((resolve) => setTimeout(resolve, p.rule.hold_ms));
    return { queue_state: p.rule.queue_state, ...(p.rule.reason !== undefined ? { queue_state_reason: p.rule.reason } : {}) };
  }

  private count(m: Map<string, number>, type: string): number {
    const k = (m.get(type) ?? 0) + 1;
    m.set(type, k);
    return k;
  }

}

function refuse(rule: { status: 429 | 402; retry_after_ms: number }, what: string): never {
  if (rule.status === 429) throw new HttpError(429, `service simulation: ${what} rate limited`, { 'retry-after-ms': String(rule.retry_after_ms) });
  throw new HttpError(402, `service simulation: ${what} refused for billing (payment required)`);
}

function hits(r: { request: SimRequestType; at?: number[]; every?: number }, type: SimRequestType, k: number): boolean {
  if (r.request !== type) return false;
  return r.at ? r.at.includes(k) : k % r.every! === 0;
}
