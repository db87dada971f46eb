// The sampling client of one sampler: asample with the SDK's retry handling, compute_logprobs,
// a limit on concurrent requests, and the cookbook's context-window capping (max_tokens cut so that
// prompt + completion fit the model's context; a prompt that leaves no room is an error). Runs,
// evals, the playground and the agent's tools all sample through here.
import { BillingError, ConflictError, ConnectionError, ContextWindowError, PromiseExpiredError, RateLimitError, ServerError, TinkerApiError, TinkerError } from './errors';
import { APIFuture } from './futures';
import type { ClientSession } from './clientSession';
import { ModelInput, SampleResponse, SamplingParams, modelInputLength } from './types';
import * as W from './wire';
import type { UsageMeter } from './usage';

/** Limits how many async tasks run at once. */
class Semaphore {
  private active = 0;
  private readonly queue: Array<() => void> = [];
  constructor(private readonly limit: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((r) => this.queue.push(r));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.queue.shift()?.();
    }
  }
}
export interface SampleOptions {
  numSamples?: number;
  promptLogprobs?: boolean;
  topkPromptLogprobs?: number;
  signal?: AbortSignal;
}

/** how long a 402 on asample is waited out (the SDK's billing_exception_max_pause_duration_sec) */
const BILLING_PAUSE_MS = 3_600_000;

export class SamplingClient {
  private seq = 0;
  private readonly limit: Semaphore;
  private backoffUntil = 0;

  private context: Promise<{ model: string; length: number } | undefined> | undefined;
  private model: Promise<string | undefined> | undefined;
  /** where this client's tokens are counted (prefill, cached prefill, sampled), under its base model; the service's meter by default */
  usage: UsageMeter | undefined;

  constructor(
    readonly service: ClientSession,
    readonly samplerId: string,
    maxConcurrent?: number,
    /** the sampler's base model, when the creator knows it (else asked of the server once) */
    private readonly baseModel?: string,
  ) {
    this.limit = new Semaphore(maxConcurrent ?? service.config.sample_max_concurrent_requests);
    this.usage = service.usage;
  }

  /** The sampler's base model: the creator's word, else the server's (asked once; a failed lookup is asked again). */
  private baseModelOf(signal?: AbortSignal): Promise<string | undefined> {
    if (this.baseModel !== undefined) return Promise.resolve(this.baseModel);
    const asked = (this.model ??= this.service.samplerBaseModel(this.samplerId, signal));
    asked.catch(() => {
      if (this.model === asked) this.model = undefined;
    });
    return asked;
  }

  /** The model's context length as the server reports it (asked once), or undefined when it gives none. */
  contextLength(signal?: AbortSignal): Promise<{ model: string; length: number } | undefined> {
    const asked = (this.context ??= (async () => {
      const model = await this.baseModelOf(signal);
      const length = model === undefined ? undefined : await this.service.contextLength(model, signal);
      return model !== undefined && length !== undefined ? { model, length } : undefined;
    })());
    asked.catch(() => {
      if (this.context === asked) this.context = undefined; // a failed lookup is asked again next time
    });
    return asked;
  }

  /**
   * `params` with max_tokens capped so that the prompt and the completion fit the model's context
   * (the cookbook's completer: min(max_tokens, context − prompt length)); a ContextWindowError when
   * the prompt alone fills it.
   */
  async fitToContext(prompt: ModelInput, params: SamplingParams, signal?: AbortSignal): Promise<SamplingParams> {
    const ctx = await this.contextLength(signal);
    if (!ctx) return params;
    const n = modelInputLength(prompt);
    if (n >= ctx.length) throw new ContextWindowError(n, ctx.length, ctx.model);
    const room = ctx.length - n;
    return params.max_tokens != null && params.max_tokens > room ? { ...params, max_tokens: room } : params;
  }

  /**
   * Samples from the prompt. Retries like the SDK's sampling handler: 429 backpressure waits and
   * resubmits with the same seq_id; an expired promise (410), timeouts, connection errors and
   * 408/409/5xx resubmit with a new seq_id after min(0.5·2^n, 10) s ± 25 %.
   */
  async sample(prompt: ModelInput, requested: SamplingParams, o: SampleOptions = {}): Promise<SampleResponse> {
    const params = await this.fitToContext(prompt, requested, o.signal);
    return this.limit.run(async () => {
      const s = this.service;
      const noRetries = s.config.sample_no_retries;
      for (let attempt = 0; ; attempt++) {
        const seqId = this.seq++;
        try {
          const fut = await this.submit(prompt, params, o, seqId);
          const res = await fut.result(o.signal);
          if (this.usage) await this.count(this.usage, prompt, res, o.signal);
          return res;
        } catch (err) {
          const e = err as Error;
          const retryable =
            e instanceof PromiseExpiredError || e instanceof ConnectionError || (e instanceof TinkerApiError && (e.status === 408 || e instanceof ConflictError || e instanceof ServerError));
          if (noRetries || !retryable) throw e;
          const base = Math.min(0.5 * 2 ** attempt, 10);
          const jitter = base * 0.25 * (2 * (s.opts.random ?? Math.random)() - 1);
          await s.sleep(Math.max(0, Math.min(10, base + jitter)) * 1000, o.signal);
        }
      }
    });
  }

  private async submit(prompt: ModelInput, params: SamplingParams, o: SampleOptions, seqId: number): Promise<APIFuture<SampleResponse>> {
    // a 402 is waited out as a 429 is, within the billing window, and shown as a billing pause until the request is accepted
    const billing: { pause?: { resume(): void }; since: number } = { since: Date.now() };
    try {
      return await this.submitUntilAccepted(prompt, params, o, seqId, billing);
    } finally {
      billing.pause?.resume();
    }
  }

  private async submitUntilAccepted(prompt: ModelInput, params: SamplingParams, o: SampleOptions, seqId: number, billing: { pause?: { resume(): void }; since: number }): Promise<APIFuture<SampleResponse>> {
    const s = this.service;
    const body = {
      num_samples: o.numSamples ?? 1,
      prompt: { chunks: prompt.chunks.map((c) => (c.type === 'encoded_text' ? { type: c.type, tokens: Array.from(c.tokens) } : c)) },
      sampling_params: params,
      sampling_session_id: this.samplerId,
      seq_id: seqId,
      prompt_logprobs: o.promptLogprobs ?? false,
      topk_prompt_logprobs: o.topkPromptLogprobs ?? 0,
      type: 'sample',
    };
    for (;;) {
      const wait = this.backoffUntil - Date.now();
      if (wait > 0) await s.sleep(wait, o.signal);
      const t0 = Date.now();
      try {
        const h = await s.transport.json(W.FutureHandle, {
          method: 'POST',
          path: '/api/v1/asample',
          json: body,
          headers: { 'x-tinker-sampling-backpressure': '1' },
          retry: false,
          signal: o.signal,
        });
        return s.future(h.request_id, 'Sample', { kind: 'sample', map: (r) => r }, (Date.now() - t0) / 1000);
      } catch (err) {
        const billed = err instanceof BillingError && Date.now() - billing.since < BILLING_PAUSE_MS;
        if (billed) billing.pause ??= s.billingPause?.('Sample');
        if (err instanceof RateLimitError || billed) {
          // backpressure: slow down, then resubmit the same request (same seq_id)
          const bytes = modelInputLength(prompt) * 10;
          this.backoffUntil = Date.now() + (bytes <= 128 * 1024 ? 1000 : 5000);
          continue;
        }
        throw err;
      }
    }
  }

  /**
   * Bills one answered request: its prompt once (whatever num_samples), split by the server's
   * prompt_cache_hit_tokens into prefill and cached prefill, and every returned sequence's tokens.
   * A sampler whose base model the server does not name is counted under its sampler id.
   */
  private async count(meter: UsageMeter, prompt: ModelInput, res: SampleResponse, signal?: AbortSignal): Promise<void> {
    const promptTokens = modelInputLength(prompt);
    const cached = Math.min(promptTokens, Math.max(0, res.prompt_cache_hit_tokens ?? 0));
    const model = (await this.baseModelOf(signal).catch(() => undefined)) ?? this.samplerId;
    meter.add(model, { prefill: promptTokens - cached, cached_prefill: cached, sampled: res.sequences.reduce((n, s) => n + s.tokens.length, 0) });
  }

  /** Log-probabilities of each prompt token under the sampler's weights (null for the first). */
  async computeLogprobs(prompt: ModelInput, signal?: AbortSignal): Promise<Array<number | null>> {
    const r = await this.sample(prompt, { max_tokens: 1, temperature: 1, top_k: -1, top_p: 1 }, { promptLogprobs: true, signal });
    if (!r.prompt_logprobs) throw new TinkerError('the server did not return prompt log-probabilities');
    return r.prompt_logprobs;
  }
}
