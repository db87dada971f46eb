// What a training or sampling client asks of the service client that made it: the session's
// transport, configuration, retries and futures. An interface of its own, so that the clients do
// not import the service client that creates them (the service client imports them).
import type { APIFuture, RequestType, ResultDecoder } from './futures';
import type { Sleep, Transport } from './transport';
import type * as W from './wire';

export interface ClientSession {
  readonly transport: Transport;
  readonly sleep: Sleep;
  readonly config: W.ClientConfigResponse;
  readonly opts: { readonly random?: () => number; readonly forwardBackwardFormat?: 'protobuf' | 'json' };
  submissionRetries<T>(fn: () => Promise<T>, signal?: AbortSignal, retryConflicts?: boolean): Promise<T>;
  future<T>(requestId: string, type: RequestType, decoder: ResultDecoder<T>, roundtripSeconds?: number): APIFuture<T>;
  nextSamplingSeq(): number;
}
