// The Tinker client: a ServiceClient creates TrainingClients and SamplingClients; one file each,
// gathered here so that callers import the client from one place.
export { DEFAULT_BASE_URL, SDK_COMPAT_VERSION, ServiceClient, jwtExpiry } from './serviceClient';
export type { LoraOptions, ServiceClientOptions } from './serviceClient';
export { TrainingClient, chunkDatums, combineMetrics } from './trainingClient';
export { SamplingClient } from './samplingClient';
export type { CustomForwardBackwardOutput, CustomLossFn, CustomLossOutput } from './customLoss';
export type { SampleOptions } from './samplingClient';
export { splitTinkerPath } from './tinkerPath';
