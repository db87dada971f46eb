// The agent's sweep tools as an agent meets them: the official MCP client over stdio against the real
// CLI (`tinker-studio mcp`, its own embedded engine). start_sweep on a YAML sweep next to the
// arithmetic example answers at once with the sweep folder while the runs go on in the background;
// sweep_status follows it to the ranking table. A bad point is refused before anything runs. Closing
// the server stops the sweep it runs; start_sweep on a new server resumes it, and every run ends with
// each step exactly once in its metrics.jsonl.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const CLI = path.join(__dirname, '../../../src/cli/main.js');
const EXAMPLE = path.resolve(__dirname, '../../../../examples/arithmetic');

interface CallResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
}
interface Row {
  run: string;
  status: string;
  steps: number;
  rank?: number;
}

const textOf = (r: CallResult) => r.content.map((c) => c.text ?? '').join('\n');

const sweepYaml = (iterations: number, maxConcurrent: number) => `base: arith.grpo.json
method: grid
max_concurrent: ${maxConcurrent}
parameters:
  learning_rate:
    values: [0.001, 0.004]
  iterations: {value: ${iterations}}
  groups_per_batch: {value: 4}
  group_size: {value: 4}
  eval_every: {value: 0}
  save_every: {value: 0}
metric:
  name: env/all/reward/total
  goal: maximize
`;

describe('agent sweep tools over MCP (start_sweep, sweep_status)', function () {
  this.timeout(600_000);
  let ws: string;
  let stderr = '';

  const server = async (): Promise<Client> => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--backend', 'local', '--workspace', ws, '--runs-dir', path.join(ws, 'runs'), '--cache-dir', path.join(ws, 'cache')],
      env: { ...(process.env as Record<string, string>), TINKER_API_KEY: '' },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const client = new Client({ name: 'tinker-studio-test', version: '0.0.0' });
    await client.connect(transport);
    return client;
  };
  const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<CallResult> => (await client.callTool({ name, arguments: args }, undefined, { timeout: 240_000 })) as CallResult;
  const ok = async (client: Client, name: string, args: Record<string, unknown>): Promise<CallResult> => {
    const r = await call(client, name, args);
    assert.ok(!r.isError, `${name} failed: ${textOf(r)}\n--- server stderr ---\n${stderr}`);
    return r;
  };
  /** sweep_status until `done` holds (each call is a real round trip; no fixed wait decides anything). */
  const statusUntil = async (client: Client, sweep: string, done: (r: CallResult) => boolean): Promise<CallResult> => {
    for (;;) {
      const r = await ok(client, 'sweep_status', { sweep });
      if (done(r)) return r;
      await new Promise((res) => setTimeout(res, 200));
    }
  };
  const stepsIn = (runDir: string) =>
    fs
      .readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).step as number);

  before(() => {
    ws = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-sweeptools-'));
    for (const f of ['arith.grpo.json', 'train.jsonl', 'holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(EXAMPLE, f), path.join(ws, f));
  });
  after(() => fs.rmSync(ws, { recursive: true, force: true }));

  it('refuses a bad point before anything runs; starts at once; sweep_status follows it to the ranking', async () => {
    const client = await server();
    try {
      fs.writeFileSync(path.join(ws, 'bad.sweep.yaml'), sweepYaml(2, 2).replace('group_size: {value: 4}', 'group_size: {values: [4, 0]}'));
      const bad = await call(client, 'start_sweep', { sweep_file: 'bad.sweep.yaml' });
      assert.ok(bad.isError);
      assert.match(textOf(bad), /point learning_rate_0\.001\.group_size_0 .*group_size: must be at least 2/);
      assert.ok(!fs.existsSync(path.join(ws, 'runs', 'bad')), 'nothing ran');

      fs.writeFileSync(path.join(ws, 'two.sweep.yaml'), sweepYaml(2, 2));
      const started = await ok(client, 'start_sweep', { sweep_file: 'two.sweep.yaml' });
      const sweep = started.structuredContent?.sweep as string;
      assert.strictEqual(sweep, path.join(ws, 'runs', 'two'));
      assert.strictEqual(started.structuredContent?.running, true, 'answers while the sweep runs');
      assert.match(textOf(started), /sweep started in the background/);
      const again = await ok(client, 'start_sweep', { sweep_file: 'two.sweep.yaml' });
      if (again.structuredContent?.running) assert.match(textOf(again), /already running|resumed/);

      const done = await statusUntil(client, 'two.sweep.yaml', (r) => r.structuredContent?.running === false);
      assert.match(textOf(done), /^done: 2\/2 runs finished\n# +run +status +steps +best env\/all\/reward\/total \(max\)/);
      const rows = done.structuredContent?.runs as Row[];
      assert.deepStrictEqual(rows.map((r) => [r.status, r.steps]).sort(), [['completed', 2], ['completed', 2]]);
      assert.deepStrictEqual(rows.map((r) => r.rank !== undefined), [true, true], 'ranked by the metric');
      for (const r of rows) assert.deepStrictEqual(stepsIn(path.join(sweep, r.run)), [0, 1]);
    } finally {
      await client.close();
    }
  });

  it('stops with the server that runs it; start_sweep on a new server resumes it, no step lost or repeated', async () => {
    // 2 runs × 40 steps, one at a time: far more than can finish between the first step seen and the
    // server's exit (with 8 steps each, a quiet CI machine once finished all 16 before the exit)
    const STEPS = 40;
    fs.writeFileSync(path.join(ws, 'long.sweep.yaml'), sweepYaml(STEPS, 1));
    const sweep = path.join(ws, 'runs', 'long');
    let client = await server();
    try {
      await ok(client, 'start_sweep', { sweep_file: 'long.sweep.yaml' });
      await statusUntil(client, sweep, (r) => (r.structuredContent?.runs as Row[]).some((x) => x.steps >= 1));
    } finally {
      await client.close(); // the server exits: the sweep stops, the running run saves a resume point
    }
    client = await server();
    try {
      const between = await ok(client, 'sweep_status', { sweep });
      assert.strictEqual(between.structuredContent?.running, false);
      assert.match(textOf(between), /^not running: [01]\/2 runs finished \(start_sweep resumes it\)/);
      const before = (between.structuredContent?.runs as Row[]).reduce((a, r) => a + r.steps, 0);
      assert.ok(before >= 1 && before < 2 * STEPS, String(before));
      const resumed = await ok(client, 'start_sweep', { sweep_file: 'long.sweep.yaml' });
      assert.match(textOf(resumed), /sweep resumed in the background/);
      const done = await statusUntil(client, sweep, (r) => r.structuredContent?.running === false);
      assert.match(textOf(done), /^done: 2\/2 runs finished/);
      for (const r of done.structuredContent?.runs as Row[]) assert.deepStrictEqual(stepsIn(path.join(sweep, r.run)), Array.from({ length: STEPS }, (_, i) => i), `${r.run}: each step once in metrics.jsonl`);
    } finally {
      await client.close();
    }
  });
});
