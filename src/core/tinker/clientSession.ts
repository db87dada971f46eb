// What a training or sampling client asks of the service client that made it: the session's
// transport, configuration, retries and futures. An interface of its own, so that the clients do
// not import the service client that creates them (the service client imports them).
import type { APIFuture, RequestType, ResultDecoder } from './futures';
import type { Sleep, Transport } from './transport';
import type * as W from './wire';
import type { UsageMeter } from './usage';

export interface ClientSession {
  readonly transport: Transport;
  readonly sleep: Sleep;
  readonly config: W.ClientConfigResponse;
  /** the meter of the run this session serves: clients it creates count their tokens into it */
  usage?: UsageMeter | undefined;
  readonly opts: { readonly random?: () => number; readonly forwardBackwardFormat?: 'protobuf' | 'json' };
  submissionRetries<T>(fn: () => Promise<T>, signal?: AbortSignal, retryConflicts?: boolean): Promise<T>;
  future<T>(requestId: string, type: RequestType, decoder: ResultDecoder<T>, roundtripSeconds?: number): APIFuture<T>;
  nextSamplingSeq(): number;
  /**
   * The context length (prompt + completion, in tokens) the server reports for `baseModel`
   * (get_server_capabilities' max_context_length), or undefined when it reports none.
   */
  contextLength(baseModel: string, signal?: AbortSignal): Promise<number | undefined>;
  /** The base model a sampler samples from (GET /samplers/{id}), or undefined where the server has no such route. */
  samplerBaseModel(samplerId: string, signal?: AbortSignal): Promise<string | undefined>;
}
