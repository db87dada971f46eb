// Environment runners: `createEnvRunner` loads an environment file (`*.env.py` in Python, `*.env.js`
// / `.mjs` / `.cjs` / `.ts` in Node) in a pool of hardened workers (src/core/reward's: filtered
// environment, memory cap, time limit, process group), finds its class, and gives episodes. Each
// call's answer is checked against the shape the cookbook's MessageEnv gives it (protocol.ts); a
// wrong shape is an `invalid_result` naming the field. Rejects with RewardLoadError when the file
// cannot be loaded (syntax error, no class, several classes and none named).
import * as path from 'node:path';
import type { ChatMessage, ToolSpec } from '../../protocol/chatMessage';
import { RewardLoadError } from '../reward/errors';
import { nodeWorkerSetup } from '../reward/node';
import { pythonWorkerSetup } from '../reward/python';
import { REWARD_DEFAULTS } from '../reward/source';
import type { RewardRunnerOptions } from '../reward/types';
import { spawnWorkerProcess } from '../reward/workerProcess';
import { existsSync } from 'node:fs';
import * as os from 'node:os';
import { EnvWorkerPool } from './pool';
import { GroupRewards, InitialObservation, shapeProblem, StepResult, type GroupReward, type EnvToWorker } from './protocol';
import type { EnvCallError } from './types';
import { NODE_ENV_WORKER_SOURCE, PYTHON_ENV_WORKER_SOURCE } from './workerSources';

export interface EnvRunnerOptions extends RewardRunnerOptions {
  /** the class to run (the spec's env.class); absent: the file's one environment class */
  className?: string;
}

export type EnvResult<T> = { ok: true; value: T } | { ok: false; error: EnvCallError };

export interface EnvEpisode {
  /** constructs the class from the dataset line and returns initial_observation() */
  start(): Promise<EnvResult<{ messages: ChatMessage[]; tools?: ToolSpec[] }>>;
  step(message: ChatMessage): Promise<EnvResult<StepResult>>;
  /** forgets the instance (always call it, also after a failure) */
  close(): Promise<void>;
}

export interface EnvRunner {
  readonly file: string;
  /** the class the workers run */
  readonly className: string;
  /** whether the file defines compute_group_rewards */
  readonly hasGroupRewards: boolean;
  episode(problem: unknown): EnvEpisode;
  /** compute_group_rewards(problems, transcripts): one (reward, metrics) per episode */
  groupRewards(problems: unknown[], transcripts: ChatMessage[][]): Promise<EnvResult<GroupReward[]>>;
  close(): Promise<void>;
  pids(): number[];
}

const NODE_EXTENSIONS = new Set(['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts']);

export function createEnvRunner(opts: EnvRunnerOptions): Promise<EnvRunner> {
  return startEnvRunner(opts).catch((e: unknown) => {
    throw e instanceof RewardLoadError ? e.asEnvironmentFile() : e;
  });
}

async function startEnvRunner(opts: EnvRunnerOptions): Promise<EnvRunner> {
  const ext = path.extname(opts.file).toLowerCase();
  let setup;
  if (ext === '.py') setup = await pythonWorkerSetup(opts, PYTHON_ENV_WORKER_SOURCE, 'the environment');
  else if (NODE_EXTENSIONS.has(ext)) setup = await nodeWorkerSetup(opts, NODE_ENV_WORKER_SOURCE, 'the environment');
  else throw new RewardLoadError(opts.file, { message: `unsupported environment file type '${ext || '(none)'}': use .env.py, .env.js, .env.mjs, .env.cjs or .env.ts` });
  const timeoutMs = opts.timeoutMs ?? REWARD_DEFAULTS.timeoutMs;
  const dir = path.dirname(setup.file);
  const cmd = { ...setup.command, cwd: existsSync(dir) ? dir : os.tmpdir() };
  const load: EnvToWorker & { type: 'load' } = { ...setup.load, ...(opts.className ? { className: opts.className } : {}) };
  const pool = new EnvWorkerPool((handlers) => spawnWorkerProcess<EnvToWorker>(cmd, handlers), {
    file: setup.file,
    workers: opts.workers ?? REWARD_DEFAULTS.workers,
    timeoutMs,
    loadTimeoutMs: opts.loadTimeoutMs ?? Math.max(30_000, timeoutMs),
    load,
    describeCrash: setup.describeCrash,
    ...('completeLoadError' in setup ? { completeLoadError: setup.completeLoadError } : {}),
  });
  const stop = () => void pool.close();
  opts.signal?.throwIfAborted();
  opts.signal?.addEventListener('abort', stop, { once: true });
  let info;
  try {
    info = await pool.start();
    opts.signal?.throwIfAborted();
  } finally {
    opts.signal?.removeEventListener('abort', stop);
  }
  return new PooledEnvRunner(pool, info.className, info.groupRewards);
}

class PooledEnvRunner implements EnvRunner {
  constructor(
    private readonly pool: EnvWorkerPool,
    readonly className: string,
    readonly hasGroupRewards: boolean,
  ) {}

  get file(): string {
    return this.pool.file;
  }

  episode(problem: unknown): EnvEpisode {
    const pool = this.pool;
    let instance: number | undefined;
    const name = this.className;
    return {
      async start() {
        const created = await pool.create(problem);
        instance = created.instance;
        if (!created.outcome.ok) return { ok: false, error: created.outcome.error };
        const out = await pool.call(instance, { op: 'initial', instance });
        if (!out.ok) return { ok: false, error: out.error };
        const parsed = InitialObservation.safeParse(out.value);
        if (!parsed.success) return invalid(`${name}.initial_observation`, parsed.error, out.value);
        const v = parsed.data;
        return { ok: true, value: Array.isArray(v) ? { messages: v } : { messages: v.messages, ...(v.tools ? { tools: v.tools } : {}) } };
      },
      async step(message) {
        if (instance === undefined) throw new Error('step() before start()');
        const out = await pool.call(instance, { op: 'step', instance, message });
        if (!out.ok) return { ok: false, error: out.error };
        const parsed = StepResult.safeParse(out.value);
        if (!parsed.success) return invalid(`${name}.step`, parsed.error, out.value);
        return { ok: true, value: parsed.data };
      },
      async close() {
        if (instance !== undefined) await pool.drop(instance);
      },
    };
  }

  async groupRewards(problems: unknown[], transcripts: ChatMessage[][]): Promise<EnvResult<GroupReward[]>> {
    const out = await this.pool.group(problems, transcripts);
    if (!out.ok) return { ok: false, error: out.error };
    const parsed = GroupRewards.safeParse(out.value);
    if (!parsed.success) return invalid('compute_group_rewards', parsed.error, out.value);
    if (parsed.data.length !== problems.length) return { ok: false, error: { kind: 'invalid_result', message: `compute_group_rewards returned ${parsed.data.length} rewards for ${problems.length} episodes` } };
    return { ok: true, value: parsed.data };
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  pids(): number[] {
    return this.pool.pids();
  }
}

function invalid(what: string, error: import('zod').ZodError, value: unknown): { ok: false; error: EnvCallError } {
  let raw: string;
  try {
    raw = JSON.stringify(value).slice(0, 1000);
  } catch {
    raw = String(value).slice(0, 1000);
  }
  return { ok: false, error: { kind: 'invalid_result', message: shapeProblem(what, error), raw } };
}
