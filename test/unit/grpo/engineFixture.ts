// Shared set-up of the GRPO loop tests: the embedded engine in this process (real HTTP on
// 127.0.0.1:0, the real compute backend, the randomly initialised byte-level model), a real Python
// reward file, a small prompt pool, and readers of what a run wrote.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { PromptPool, Problem } from '../../../src/core/data/types';
import { MetricsRecord, CheckpointRecord, parseRecords } from '../../../src/core/runs/runDirectory';
import { ServiceClient } from '../../../src/core/tinker/client';
import type { ComputeBackend } from '../../../src/engine/contract';
import { createComputeBackend } from '../../../src/engine/model';
import { EngineServer, startEngineServer } from '../../../src/engine/server';
import type { AppliedStep } from '../../../src/engine/server/store';

export interface TestEngine {
  server: EngineServer;
  backend: ComputeBackend;
  close(): Promise<void>;
}

export async function startTestEngine(dir: string): Promise<TestEngine> {
  // no weights folder: only the randomly initialised model, the fastest to load
  const backend = await createComputeBackend({ weightsDir: path.join(dir, 'no-weights') });
  const server = await startEngineServer({ dataDir: path.join(dir, 'engine-data'), backend, longPollMs: 2000 });
  return {
    server,
    backend,
    close: async () => {
      await server.close();
      await backend.close();
    },
  };
}

/** A fresh temp folder with the engine in it and a client connected to it; close() undoes all three. */
export interface EngineClient {
  dir: string;
  engine: TestEngine;
  service: ServiceClient;
  close(): Promise<void>;
}

export async function startEngineClient(tmpPrefix: string): Promise<EngineClient> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), tmpPrefix));
  let engine: TestEngine | undefined;
  let service: ServiceClient | undefined;
  const close = async () => {
    service?.close();
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    engine = await startTestEngine(dir);
    service = await ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });
  } catch (err) {
    await close();
    throw err;
  }
  return { dir, engine, service, close };
}

/**
 * A reward that splits most groups (even-length completions score 1), and raises for the ground
 * truth "boom" so the run must survive a failing reward function.
 */
export const REWARD_PY = `
def compute_reward(completion, ground_truth):
    if ground_truth == "boom":
        raise ValueError("boom on purpose")
    return 1.0 if len(completion) % 2 == 0 else 0.0
`;

export function writeReward(dir: string): string {
  const file = path.join(dir, 'reward.py');
  fs.writeFileSync(file, REWARD_PY);
  return file;
}

const problem = (id: string, question: string, answer: string): Problem => ({ id, messages: [{ role: 'user', content: question }], groundTruth: answer });

export const POOL: PromptPool = {
  train: [problem('t:1', 'What is 1 + 2?', '3'), problem('t:2', 'What is 4 + 4?', '8'), problem('t:3', 'Say boom', 'boom'), problem('t:4', 'What is 5 + 0?', '5')],
  holdout: [problem('h:1', 'What is 2 + 2?', '4'), problem('h:2', 'What is 7 + 1?', '8')],
  skipped: [],
};

export function readMetricsLines(runDir: string): MetricsRecord[] {
  const file = path.join(runDir, 'metrics.jsonl');
  const { records, problems } = parseRecords(fs.readFileSync(file, 'utf8'), file, MetricsRecord);
  assert.deepStrictEqual(problems, []);
  return records;
}

export function readCheckpointLines(runDir: string): CheckpointRecord[] {
  const file = path.join(runDir, 'checkpoints.jsonl');
  if (!fs.existsSync(file)) return [];
  const { records, problems } = parseRecords(fs.readFileSync(file, 'utf8'), file, CheckpointRecord);
  assert.deepStrictEqual(problems, []);
  return records;
}

export function readJsonl(file: string): unknown[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);
}

/** Every JSONL file under the run directory ends with a newline (no half-written record). */
export function assertNoPartialLines(runDir: string): void {
  const walk = (d: string): string[] => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
  for (const f of walk(runDir)) {
    assert.ok(!path.basename(f).endsWith('.tmp'), `a temp file was left behind: ${f}`);
    if (!f.endsWith('.jsonl')) continue;
    const text = fs.readFileSync(f, 'utf8');
    assert.ok(text === '' || text.endsWith('\n'), `${f} ends in a partial line`);
    readJsonl(f);
  }
}

export async function appliedSteps(engine: TestEngine): Promise<AppliedStep[]> {
  return engine.server.store.appliedSteps();
}
