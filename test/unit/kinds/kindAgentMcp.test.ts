// A kind registered at run time (test/unit/kinds/toyKind.ts) through the agent surfaces: the MCP
// server lists and serves its init_toy / train_toy_step beside the built-in tools (the official MCP
// client over an in-memory transport, the session on the embedded engine), and its session resumes
// with the configuration its config.json records, like a built-in kind's.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { serveMcp } from '../../../src/cli/mcp';
import { TrainingSession } from '../../../src/core/agent/session';
import { AGENT_TOOLS, agentTool } from '../../../src/core/agent/tools';
import { registerKind } from '../../../src/core/kinds/registry';
import { readMetricsRowsSync } from '../../../src/core/runs/runDirectory';
import { ServiceClient } from '../../../src/core/tinker/client';
import { startTestEngine, TestEngine } from '../grpo/engineFixture';
import { TOY_KIND } from './toyKind';

interface CallResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
}
const textOf = (r: CallResult) => r.content.map((c) => c.text ?? '').join('\n');

describe('a registered kind through the agent surfaces (MCP, resume)', function () {
  this.timeout(300_000);
  let dir: string;
  let engine: TestEngine;
  let unregister: (() => void) | undefined;
  const connect = () => ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });
  const session = (runs: string) => new TrainingSession({ runsDir: path.join(dir, runs), cacheDir: path.join(dir, 'cache'), baseDir: dir, connect, idleMs: 0 });

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-kind-agent-'));
    engine = await startTestEngine(dir);
    unregister = registerKind(TOY_KIND);
  });
  after(async () => {
    unregister?.();
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('MCP lists init_toy and train_toy_step beside the built-in tools and serves them; gone once the kind is removed', async () => {
    fs.writeFileSync(path.join(dir, 'mcp.toy.json'), JSON.stringify({ steps: 2, lora_rank: 4 }));
    const s = session('runs-mcp');
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const served = serveMcp(s, { version: 'test', redact: (t) => t, transport: serverSide });
    const client = new Client({ name: 'kind-test', version: '0.0.0' });
    await client.connect(clientSide);
    try {
      const listed = (await client.listTools()).tools;
      assert.deepStrictEqual(listed.map((t) => t.name), [...AGENT_TOOLS.map((t) => t.name), 'init_toy', 'train_toy_step']);
      const train = listed.find((t) => t.name === 'train_toy_step')!;
      assert.deepStrictEqual(Object.keys(train.inputSchema.properties ?? {}), ['num_steps']);
      const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 240_000 })) as CallResult;

      const started = await call('init_toy', { spec_file: 'mcp.toy.json' });
      assert.ok(!started.isError, textOf(started));
      assert.match(textOf(started), /^session ready: Toy mcp on .*, 2 steps of "toy kinds arrive as one row"\. Nothing trained yet: call train_toy_step\./);
      const trained = await call('train_toy_step', { num_steps: 2 });
      assert.ok(!trained.isError, textOf(trained));
      assert.deepStrictEqual([trained.structuredContent?.first_step, trained.structuredContent?.last_step], [0, 1]);
      const runDir = started.structuredContent?.run_dir as string;
      assert.deepStrictEqual(readMetricsRowsSync(runDir).map((r) => r.step), [0, 1]);
      const wrong = await call('train_toy_step', { num_iterations: 1 });
      assert.ok(wrong.isError);
      assert.match(textOf(wrong), /train_toy_step: unknown argument "num_iterations"; it accepts num_steps/);
      const done = await call('finish', {});
      assert.ok(!done.isError, textOf(done));
      assert.match(textOf(done), /^finished mcp-\S+ after 2 steps\nfinal sampler: tinker:\/\//);

      unregister?.();
      unregister = undefined;
      assert.deepStrictEqual((await client.listTools()).tools.map((t) => t.name), AGENT_TOOLS.map((t) => t.name));
      const gone = await call('init_toy', { spec_file: 'mcp.toy.json' });
      assert.ok(gone.isError);
      assert.match(textOf(gone), /unknown tool "init_toy"/);
    } finally {
      unregister ??= registerKind(TOY_KIND);
      await client.close();
      await served;
    }
  });

  it('resumes with its recorded configuration: a changed spec file is named, not applied; steps may be raised', async () => {
    const file = path.join(dir, 'again.toy.json');
    fs.writeFileSync(file, JSON.stringify({ steps: 3, lora_rank: 4, text: 'the first text' }));
    const first = session('runs-resume');
    const named = async (n: string) => agentTool(n)!;
    let runDir: string;
    try {
      const started = await (await named('init_toy')).run(first, { spec_file: 'again.toy.json' });
      runDir = (started.value as { run_dir: string }).run_dir;
      await (await named('train_toy_step')).run(first, { num_steps: 1 });
    } finally {
      await first.close();
    }
    // the file now says another text (not resumable) and more steps
    fs.writeFileSync(file, JSON.stringify({ steps: 5, lora_rank: 4, text: 'another text' }));
    const second = session('runs-resume');
    try {
      const resumed = await (await named('init_toy')).run(second, { spec_file: 'again.toy.json', resume: 'latest', overrides: { steps: 4 } });
      assert.strictEqual((resumed.value as { run_dir: string }).run_dir, runDir);
      assert.match(resumed.text, /^session ready: Toy again on .*, 4 steps of "the first text"\. Resumed \S+ at step 1: call train_toy_step to continue\./);
      assert.match(resumed.text, /the spec file now differs in text \(run "the first text", file "another text"\), not applied: a resume may change only steps, given as overrides\./);
      const r = await (await named('train_toy_step')).run(second, { num_steps: 5 });
      assert.deepStrictEqual([(r.value as { first_step: number }).first_step, (r.value as { last_step: number }).last_step], [1, 3]);
      assert.match(r.text, /\nran 3 of the 5 steps asked: the run ends at 4 steps, all done now; call finish, or init_toy with resume and a larger "steps" override/);
    } finally {
      await second.close();
    }
  });
});
