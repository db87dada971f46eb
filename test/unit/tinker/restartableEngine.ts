// The embedded engine in this process, restartable on the same data dir and port: restart() stops
// the HTTP server (waiting for the training step in progress, as a stopping engine process does),
// drops its compute backend with every loaded model, and starts a fresh backend and server on the
// same port, as `npm run engine -- --data-dir DIR` started again would. What survives is what the
// engine keeps on disk: training runs, checkpoints and the record of applied steps.
import { request } from 'undici';
import { z } from 'zod';
import type { ComputeBackend } from '../../../src/engine/contract';
import type { EngineServer, EngineServerOptions } from '../../../src/engine/server';
import { startEngine } from './engineFixtures';

const AppliedSteps = z.object({
  steps: z.array(z.object({ model_id: z.string(), seq_id: z.number().int(), type: z.string(), request_id: z.string(), time: z.string() })),
});
export type AppliedStep = z.infer<typeof AppliedSteps>['steps'][number];

export class RestartableEngine {
  private server!: EngineServer;
  private backend!: ComputeBackend;
  private port = 0;
  restarts = 0;

  private constructor(
    readonly dir: string,
    private readonly extra: Partial<EngineServerOptions>,
  ) {}

  static async start(dir: string, extra: Partial<EngineServerOptions> = {}): Promise<RestartableEngine> {
    const e = new RestartableEngine(dir, extra);
    await e.boot();
    return e;
  }

  get url(): string {
    return this.server.url;
  }

  private async boot(): Promise<void> {
    ({ server: this.server, backend: this.backend } = await startEngine(this.dir, { longPollMs: 500, ...this.extra, port: this.port }));
    this.port = this.server.port;
  }

  /** Stops the engine, runs `whileDown` (e.g. wait until a client has found it gone), starts it again. */
  async restart(whileDown?: () => Promise<void>): Promise<void> {
    await this.stop();
    await whileDown?.();
    await this.boot();
    this.restarts++;
  }

  async stop(): Promise<void> {
    await this.server.close();
    await this.backend.close();
  }

  /** The engine's own record of applied training steps, read over HTTP from the engine itself. */
  async appliedSteps(): Promise<AppliedStep[]> {
    const r = await request(`${this.server.url}/api/v1/_engine/applied_steps`);
    return AppliedSteps.parse(await r.body.json()).steps;
  }
}
