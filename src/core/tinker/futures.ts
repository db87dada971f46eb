// Waiting for the result of an asynchronous Tinker request: retrieve_future long-polling with the
// SDK's handling of every answer (protocol §6.4, §6.7). Submitting and waiting are separate, so a
// caller can submit forward_backward and optim_step back to back and wait afterwards.
import { CancelledError, ConnectionError, PromiseExpiredError, RequestFailedError, TinkerApiError, errorForStatus } from './errors';
import { decodeForwardBackwardOutput, decodeSampleResponse } from './proto';
import { PAUSED_BILLING, QueuePauses } from './queuePauses';
import { HttpResult, Sleep, Transport, parseJsonBody } from './transport';
import type { ForwardBackwardOutput, SampleResponse } from './types';
import { CompleteMetadataResponse, FutureErrorResponse, ForwardBackwardOutputJson, SampleResponseJson, TryAgainResponse } from './wire';
import * as z from 'zod';

export type RequestType = 'CreateModel' | 'ForwardBackward' | 'Forward' | 'OptimStep' | 'SaveWeights' | 'LoadWeights' | 'SaveWeightsForSampler' | 'Sample' | 'UnloadModel';

export interface QueueStateEvent {
  /** '' for a submission the service has not accepted yet (a 402 on it) */
  requestId: string;
  /** unknown for a submission paused on 402 whose caller did not name it */
  requestType?: RequestType;
  /** active | paused_capacity | paused_rate_limit, or paused_billing: the client's own pause on HTTP 402 */
  queueState: string;
  /** the service's queue_state_reason; "billing" for a 402 pause */
  reason?: string;
}

export interface PollContext {
  transport: Transport;
  sleep: Sleep;
  /** client-side timeout of one poll; longer than the server's hold so a held poll is not cut */
  pollTimeoutMs: number;
  onQueueState?: (e: QueueStateEvent) => void;
  billingPauseMs?: number;
  /** where the time spent paused is counted (the service client's) */
  pauses?: QueuePauses;
}

/** How the result is decoded: protobuf-capable results ask for protobuf and accept either encoding. */
export type ResultDecoder<T> =
  | { kind: 'forward_backward'; map: (o: ForwardBackwardOutput) => T }
  | { kind: 'sample'; map: (o: SampleResponse) => T }
  | { kind: 'json'; schema: z.ZodType<T> };

/** consecutive connection failures while polling before a future fails (about 3.5 minutes of waits) */
const MAX_POLL_CONNECTION_ERRORS = 10;

export class APIFuture<T> {
  private promise: Promise<T> | undefined;
  /** the queue state this request is paused in, if it is */
  private pausedAs: string | undefined;

  constructor(
    private readonly ctx: PollContext,
    readonly requestId: string,
    readonly requestType: RequestType,
    private readonly decoder: ResultDecoder<T>,
    /** time from the start of the submit call to receiving the handle (telemetry header) */
    private readonly roundtripSeconds = 0,
  ) {}

  /** Polls until the result is there (memoised: calling twice waits once). */
  result(signal?: AbortSignal): Promise<T> {
    // answered, failed or given up: it waits no longer
    this.promise ??= this.poll(signal).finally(() => this.leavePause());
    return this.promise;
  }

  private async poll(signal?: AbortSignal): Promise<T> {
    const { transport, sleep } = this.ctx;
    const wantsProto = this.decoder.kind !== 'json';
    let iteration = 0;
    let connErrors = 0;
    let rateLimited = 0;
    let bad400 = 0;
    let serverErrors = 0;
    const billingStart = Date.now();
    for (;; iteration++) {
      if (signal?.aborted) throw new CancelledError(`waiting for request ${this.requestId}`);
      let res: HttpResult;
      try {
        res = await transport.call({
          method: 'POST',
          path: '/api/v1/retrieve_future',
          json: { request_id: this.requestId, allow_metadata_only: false },
          headers: {
            accept: wantsProto ? 'application/x-protobuf, application/json' : 'application/json',
            'x-tinker-request-iteration': String(iteration),
            'x-tinker-request-type': this.requestType,
            ...(iteration === 0 ? { 'x-tinker-create-promise-roundtrip-time': this.roundtripSeconds.toFixed(3) } : {}),
          },
          timeoutMs: this.ctx.pollTimeoutMs,
          retry: false,
          acceptAnyStatus: true,
          signal,
        });
      } catch (err) {
        if (err instanceof CancelledError) throw err;
        if (err instanceof ConnectionError) {
          // a client-side timeout of a held poll means "not ready yet": poll again at once
          if (/no answer within/.test(err.message)) continue;
          connErrors++;
          // the server stopped (an engine killed mid-run) or is unreachable: give up after a few
          // minutes instead of polling forever, so the run stops with a message and can be resumed
          if (connErrors > MAX_POLL_CONNECTION_ERRORS) {
            throw new ConnectionError(
              `request ${this.requestId} (${this.requestType}): the server stopped answering (${connErrors} failed attempts in a row; last: ${err.message}). ` +
                'Check that it is running; a run can be resumed from its last checkpoint once it is back.',
              'retrieve_future',
              err,
            );
          }
          await sleep(Math.min(2 ** connErrors, 30) * 1000, signal);
          continue;
        }
        throw err;
      }
      connErrors = 0;
      const status = res.status;
      if (status !== 402 && this.pausedAs === PAUSED_BILLING) this.leavePause();
      if (status === 200) {
        rateLimited = 0;
        serverErrors = 0;
        const ctype = res.headers['content-type'] ?? '';
        if (ctype.includes('application/x-protobuf')) return this.decodeProto(res.body);
        const body = parseJsonBody(CompleteOrAny, res.body, 'POST /api/v1/retrieve_future');
        const tryAgain = TryAgainResponse.safeParse(body);
        if (tryAgain.success) {
          if (tryAgain.data.queue_state) this.queueAnswer(tryAgain.data.queue_state, tryAgain.data.queue_state_reason ?? undefined);
          continue;
        }
        if (CompleteMetadataResponse.safeParse(body).success) continue;
        const failed = FutureErrorResponse.safeParse(body);
        if (failed.success && typeof (body as { error?: unknown }).error === 'string') {
          throw new RequestFailedError(
            `request ${this.requestId} (${this.requestType}) failed [${failed.data.category}]: ${transport.redact(failed.data.error)}`,
            this.requestId,
            failed.data.category,
          );
        }
        return this.decodeJson(res.body);
      }
      if (status === 408) {
        bad400 = 0;
        try {
          const j = JSON.parse(res.body.toString('utf8')) as { queue_state?: unknown; queue_state_reason?: unknown };
          if (typeof j.queue_state === 'string') this.queueAnswer(j.queue_state, typeof j.queue_state_reason === 'string' ? j.queue_state_reason : undefined);
        } catch {
          /* no JSON body */
        }
        continue;
      }
      if (status >= 500) {
        // The SDK re-polls at once; a short growing pause keeps a failing server from being hammered.
        serverErrors++;
        await sleep(Math.min(0.05 * 2 ** serverErrors, 2) * 1000, signal);
        continue;
      }
      if (status === 429) {
        rateLimited++;
        await sleep(Math.min(2 ** rateLimited, 30) * 1000, signal);
        continue;
      }
      if (status === 402 && Date.now() - billingStart < (this.ctx.billingPauseMs ?? 3_600_000)) {
        if (this.pausedAs !== PAUSED_BILLING) this.queueAnswer(PAUSED_BILLING, 'billing');
        await sleep(5000, signal);
        continue;
      }
      if (status === 410) throw new PromiseExpiredError(this.requestId);
      if (status === 400 && bad400 < 3) {
        bad400++;
        continue;
      }
      throw errorForStatus(status, 'POST /api/v1/retrieve_future', transport.redact(res.body.toString('utf8')));
    }
  }

  /** The service (or a 402) says where this request's queue stands: a pause begins, changes or ends. */
  private queueAnswer(queueState: string, reason?: string): void {
    // only paused_* states are pauses; a state this client does not know is reported and left alone
    if (!queueState.startsWith('paused')) {
      if (queueState === 'active') {
        this.pausedAs = undefined;
        this.ctx.pauses?.resume(this.requestId);
      }
    } else {
      this.pausedAs = queueState;
      this.ctx.pauses?.pause(this.requestId, queueState, reason);
    }
    this.emitQueue(queueState, reason);
  }

  private leavePause(): void {
    if (this.pausedAs !== undefined) this.queueAnswer('active');
  }

  private emitQueue(queueState: string, reason?: string): void {
    this.ctx.onQueueState?.({ requestId: this.requestId, requestType: this.requestType, queueState, reason });
  }

  private decodeProto(body: Buffer): T {
    const d = this.decoder;
    if (d.kind === 'forward_backward') return d.map(decodeForwardBackwardOutput(body));
    if (d.kind === 'sample') return d.map(decodeSampleResponse(body));
    throw new TinkerApiError(`request ${this.requestId}: a protobuf answer where JSON was expected`, 200, 'retrieve_future', '');
  }

  private decodeJson(body: Buffer): T {
    const d = this.decoder;
    const where = `retrieve_future(${this.requestType})`;
    if (d.kind === 'forward_backward') return d.map(parseJsonBody(ForwardBackwardOutputJson, body, where) as ForwardBackwardOutput);
    if (d.kind === 'sample') return d.map(parseJsonBody(SampleResponseJson, body, where) as SampleResponse);
    return parseJsonBody(d.schema, body, where);
  }
}

const CompleteOrAny = z.record(z.string(), z.unknown());

/** A future whose value is computed from other futures (chunked forward_backward). */
export class CombinedFuture<T> {
  private promise: Promise<T> | undefined;
  constructor(
    readonly parts: Array<{ result(signal?: AbortSignal): Promise<unknown> }>,
    private readonly combine: (results: unknown[]) => T,
  ) {}

  result(signal?: AbortSignal): Promise<T> {
    this.promise ??= Promise.all(this.parts.map((p) => p.result(signal))).then(this.combine);
    return this.promise;
  }
}
