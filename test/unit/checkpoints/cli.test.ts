// `tinker-studio checkpoints …` as a child process against the embedded engine running in this
// test's process (backend "custom" at its URL): list (paged runs, a run's checkpoints, JSON),
// publish/unpublish, ttl, delete (refused without --yes; a missing path fails alone), download.
import * as assert from 'assert';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseCheckpointsArgs } from '../../../src/cli/checkpointsArgs';
import { listRunCheckpoints } from '../../../src/core/checkpoints/manage';
import { ServiceClient, TrainingClient } from '../../../src/core/tinker/client';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { TestEngine, startTestEngine } from '../grpo/engineFixture';

const CLI = path.join(__dirname, '../../../src/cli/main.js');

function cli(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, TINKER_API_KEY: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve) => proc.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('CLI: tinker-studio checkpoints', function () {
  this.timeout(120_000);
  let dir: string;
  let engine: TestEngine;
  let client: ServiceClient;
  let tc: TrainingClient;
  let server: string[];

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-ckpt-cli-'));
    engine = await startTestEngine(dir);
    server = ['--backend', 'custom', '--base-url', engine.server.url];
    client = await ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test', heartbeatIntervalMs: 200 });
    tc = await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: 3 });
    await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 2 });
  });
  after(async () => {
    client?.close();
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const save = async (name: string, kind: 'state' | 'sampler') => (await (kind === 'state' ? tc.saveState(name) : tc.saveWeightsForSampler(name))).result().then((r) => r.path!);
  const facts = async (p: string) => (await listRunCheckpoints(client, tc.modelId)).find((c) => c.tinkerPath === p);

  it('lists the server runs a page at a time, and a run\'s checkpoints', async () => {
    const s = await save('cli-a', 'state');
    const page = await cli(['checkpoints', 'list', '--limit', '1', ...server], dir);
    assert.strictEqual(page.code, 0, page.stderr);
    assert.match(page.stdout, /runs 1–1 of 2; next page: --offset 1/);
    const next = await cli(['checkpoints', 'list', '--limit', '1', '--offset', '1', ...server], dir);
    assert.match(next.stdout, /runs 2–2 of 2\n$/);
    const ids = [page.stdout, next.stdout].map((o) => o.split('  ')[0]).sort();
    assert.ok(ids.includes(tc.modelId), `both pages together name the run (${ids.join(', ')})`);
    const run = await cli(['checkpoints', 'list', '--run', tc.modelId, ...server], dir);
    assert.strictEqual(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`^state +${s.replace(/[/.]/g, '\\$&')}  \\S+  private  no expiry  \\d`, 'm'));
    const json = await cli(['checkpoints', 'list', '--run', tc.modelId, '--json', ...server], dir);
    const parsed = JSON.parse(json.stdout) as Array<{ tinkerPath: string; kind: string; public: boolean }>;
    const row = parsed.find((c) => c.tinkerPath === s);
    assert.deepStrictEqual([row?.kind, row?.public], ['state', false]);
  });

  it('publishes, unpublishes and sets or clears a TTL', async () => {
    const p = await save('cli-pub', 'sampler');
    const pub = await cli(['checkpoints', 'publish', p, ...server], dir);
    assert.strictEqual(pub.code, 0, pub.stderr);
    assert.match(pub.stdout, /1 of 1 published/);
    assert.strictEqual((await facts(p))?.public, true);
    const again = await cli(['checkpoints', 'publish', p, ...server], dir);
    assert.strictEqual(again.code, 1);
    assert.match(again.stderr, /failed: cannot publish .*: it is already public/);
    assert.strictEqual((await cli(['checkpoints', 'unpublish', p, ...server], dir)).code, 0);
    assert.strictEqual((await facts(p))?.public, false);
    assert.strictEqual((await cli(['checkpoints', 'ttl', p, '--ttl', '2d', ...server], dir)).code, 0);
    const listed = await cli(['checkpoints', 'list', '--run', tc.modelId, ...server], dir);
    assert.match(listed.stdout, new RegExp(`${p.replace(/[/.]/g, '\\$&')}  \\S+  private  expires in 2 days`));
    assert.strictEqual((await cli(['checkpoints', 'ttl', p, '--clear', ...server], dir)).code, 0);
    assert.strictEqual((await facts(p))?.expiresAt, undefined);
  });

  it('deletes only with --yes, and a missing path fails alone', async () => {
    const a = await save('cli-del-a', 'state');
    const b = await save('cli-del-b', 'sampler');
    const missing = `tinker://${tc.modelId}/weights/not-there`;
    const refused = await cli(['checkpoints', 'delete', a, b, ...server], dir);
    assert.strictEqual(refused.code, 2);
    assert.match(refused.stderr, /this deletes 2 checkpoints for good:\n {2}tinker:.*\n {2}tinker:.*\nrun again with --yes/);
    assert.ok(await facts(a), 'nothing deleted without --yes');
    const r = await cli(['checkpoints', 'delete', a, missing, b, '--yes', '--concurrency', '2', ...server], dir);
    assert.strictEqual(r.code, 1);
    assert.match(r.stdout, /2 of 3 deleted; 1 failed/);
    assert.match(r.stderr, /failed: cannot delete .*not-there: the server has no such checkpoint/);
    assert.strictEqual(await facts(a), undefined);
    assert.strictEqual(await facts(b), undefined);
  });

  it('lists the local runs\' checkpoints with what the server says about each', async () => {
    const kept = await save('cli-local', 'sampler');
    const gone = `tinker://${tc.modelId}/weights/deleted-long-ago`;
    const runDir = path.join(dir, 'runs', 'local-run');
    fs.mkdirSync(runDir, { recursive: true });
    fs.writeFileSync(path.join(runDir, 'metrics.jsonl'), '{"step": 0}\n');
    fs.writeFileSync(path.join(runDir, 'checkpoints.jsonl'), `${JSON.stringify({ name: '000001', batch: 1, state_path: gone, sampler_path: kept })}\n`);
    const r = await cli(['checkpoints', 'list', '--local', '--runs-dir', path.join(dir, 'runs'), ...server], dir);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^local-run/000001  state +${gone.replace(/[/.]/g, '\\$&')}  not on the server$`, 'm'));
    assert.match(r.stdout, new RegExp(`^local-run/000001  sampler  ${kept.replace(/[/.]/g, '\\$&')}  \\S+  private  no expiry`, 'm'));
  });

  it('downloads an archive unpacked into --output', async () => {
    const p = await save('cli-dl', 'sampler');
    const out = path.join(dir, 'dl');
    const r = await cli(['checkpoints', 'download', p, '--output', out, ...server], dir);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, /downloaded .* into .*cli-dl \(adapter_config\.json, adapter_model\.tsstate, checkpoint_complete;/);
    const [folder] = fs.readdirSync(out);
    assert.deepStrictEqual(fs.readdirSync(path.join(out, folder!)).sort(), ['adapter_config.json', 'adapter_model.tsstate', 'checkpoint_complete']);
  });

  it('refuses bad arguments with what to type', () => {
    assert.throws(() => parseCheckpointsArgs(['prune']), /checkpoints needs an action: list, search, publish/);
    assert.throws(() => parseCheckpointsArgs(['publish']), /publish needs at least one tinker:\/\/ path/);
    assert.throws(() => parseCheckpointsArgs(['ttl', 'tinker://r/weights/x']), /--ttl <duration> .* or --clear/);
    assert.throws(() => parseCheckpointsArgs(['delete', 'r/weights/x']), /is not a tinker:\/\/ path/);
    assert.throws(() => parseCheckpointsArgs(['list', '--run', 'a', '--local']), /not both/);
    assert.deepStrictEqual(parseCheckpointsArgs(['delete', 'tinker://r/weights/x', '-y']).yes, true);
  });
});
