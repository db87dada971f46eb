// Typed errors of the Tinker client. Messages tell a person what happened and what to do; they never
// contain the API key (the transport redacts it from anything a server echoes back).

export class TinkerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * A prompt that leaves no room for a completion in the model's context (the cookbook's completer
 * raises the same): found before anything is sent.
 */
export class ContextWindowError extends TinkerError {
  constructor(
    readonly promptTokens: number,
    readonly contextLength: number,
    readonly model: string,
    /** what the prompt belongs to, e.g. "problem p17", when the caller knows */
    readonly subject?: string,
  ) {
    super(
      `${subject ? `${subject}: ` : ''}the prompt is ${promptTokens} tokens, ${promptTokens > contextLength ? 'longer than' : 'as long as'} the context of ${model} (${contextLength} tokens): ` +
        'no room is left for a completion; shorten the prompt (fewer or shorter messages, a shorter system prompt)',
    );
  }

  /** The same error, naming what the prompt belongs to. */
  about(subject: string): ContextWindowError {
    return new ContextWindowError(this.promptTokens, this.contextLength, this.model, subject);
  }
}

/** The server answered with a non-2xx status. */
export class TinkerApiError extends TinkerError {
  constructor(
    message: string,
    readonly status: number,
    readonly endpoint: string,
    readonly body: string,
  ) {
    super(message);
  }
}

export class AuthenticationError extends TinkerApiError {}
export class BillingError extends TinkerApiError {}
export class PermissionDeniedError extends TinkerApiError {}
export class NotFoundError extends TinkerApiError {}
export class ConflictError extends TinkerApiError {}
export class RateLimitError extends TinkerApiError {}
export class UnprocessableError extends TinkerApiError {}
export class ServerError extends TinkerApiError {}

/** The connection failed or timed out before a response arrived. */
export class ConnectionError extends TinkerError {
  constructor(
    message: string,
    readonly endpoint: string,
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}

/** An asynchronous operation finished with an error (retrieve_future answered {error, category}). */
export class RequestFailedError extends TinkerError {
  constructor(
    message: string,
    readonly requestId: string,
    readonly category: string,
  ) {
    super(message);
  }
}

/** retrieve_future answered 410: the promise expired; the original request must be submitted again. */
export class PromiseExpiredError extends TinkerError {
  constructor(readonly requestId: string) {
    super(`the server no longer has the result of request ${requestId} (HTTP 410); the request has to be submitted again`);
  }
}

/**
 * An earlier request of a training client could not be submitted, so its seq_id never reached the
 * server, which runs a model's requests in seq_id order and would wait for it forever.
 */
export class TrainingSequenceError extends TinkerError {
  constructor(
    readonly modelId: string,
    readonly missingSeqId: number,
    cause: string,
  ) {
    super(
      `training client ${modelId}: request seq_id ${missingSeqId} could not be submitted (${cause}); the server would wait for it forever, so no later request is sent — continue from the last checkpoint with a new training client`,
    );
  }
}

/** A response did not have the shape the protocol promises. */
export class ResponseShapeError extends TinkerError {}

/** The operation was cancelled through its AbortSignal. */
export class CancelledError extends TinkerError {
  constructor(what = 'the request') {
    super(`${what} was cancelled`);
  }
}

const HINTS: Record<number, string> = {
  401: 'the API key was rejected: check it with "Tinker: Set API Key" (keys start with tml-)',
  402: 'the account has no credit left or a billing problem: check your Tinker billing',
  403: 'this key may not do that (permission denied)',
  404: 'not found',
  409: 'conflict',
  413: 'the request is too large',
  422: 'the server rejected the request as invalid',
  429: 'rate limited: too many requests, slowing down',
};

function detailOf(body: string): string {
  try {
    const j = JSON.parse(body) as { detail?: unknown; error?: unknown; message?: unknown };
    const d = j.detail ?? j.error ?? j.message;
    if (typeof d === 'string') return d;
    if (d !== undefined) return JSON.stringify(d);
  } catch {
    /* not JSON */
  }
  return body.slice(0, 500);
}

/** The typed error for an HTTP status, with a message that names the endpoint and says what to do. */
export function errorForStatus(status: number, endpoint: string, body: string): TinkerApiError {
  const detail = detailOf(body);
  let hint = HINTS[status] ?? (status >= 500 ? 'the server had an internal error' : `HTTP ${status}`);
  if (/prompt.*(too long|exceeds|longer)|context length|sequence .*longer/i.test(detail)) hint = 'the prompt is too long for this model';
  else if (/model.*(not (available|supported|served|found))|base model .* is not served/i.test(detail)) hint = 'that model is not available on this server';
  const message = `${endpoint}: ${hint}${detail && !hint.includes(detail) ? ` — ${detail}` : ''} (HTTP ${status})`;
  const Cls =
    status === 401
      ? AuthenticationError
      : status === 402
        ? BillingError
        : status === 403
          ? PermissionDeniedError
          : status === 404
            ? NotFoundError
            : status === 409
              ? ConflictError
              : status === 429
                ? RateLimitError
                : status === 422
                  ? UnprocessableError
                  : status >= 500
                    ? ServerError
                    : TinkerApiError;
  return new Cls(message, status, endpoint, body);
}
