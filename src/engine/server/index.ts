// The embedded engine's server: the Tinker protocol over HTTP on 127.0.0.1 (see server.ts).
export { MAX_NUM_SAMPLES, MAX_SAMPLING_TOKENS, startEngineServer } from './server';
export type { EngineServer, EngineServerOptions } from './server';
