// Checkpoint metadata, search and projects on the embedded engine over real HTTP: saves carry
// user_metadata (the run's keys and the step), listings report it with the base model, runs are
// created in the session's project and the runs listing filters by it, and `checkpoints search`
// (core and CLI) filters by metadata, type, base model and project, a page at a time.
import * as assert from 'assert';
import { spawn } from 'child_process';
import * as path from 'path';
import { parseCheckpointsArgs } from '../../../src/cli/checkpointsArgs';
import { listRunCheckpoints } from '../../../src/core/checkpoints/manage';
import { parseSearchQuery, searchCheckpoints } from '../../../src/core/checkpoints/search';
import { saveCheckpoint } from '../../../src/core/runs/loopRuntime';
import { ServiceClient } from '../../../src/core/tinker/client';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { EngineClient, startEngineClient } from '../grpo/engineFixture';

const CLI = path.join(__dirname, '../../../src/cli/main.js');

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, TINKER_API_KEY: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve) => proc.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('checkpoint metadata, search and projects (engine over HTTP)', function () {
  this.timeout(120_000);
  let ec: EngineClient;
  let inProject: ServiceClient;
  let runA: string;
  let runB: string;

  before(async () => {
    ec = await startEngineClient('tinker-search-');
    inProject = await ServiceClient.connect({ baseUrl: ec.engine.server.url, clientVersion: 'test', projectId: 'proj-blue' });
    const a = await inProject.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: 1 });
    a.checkpointMetadata = { run_name: 'alpha', spec_file: 'alpha.grpo.json', team: 'blue' };
    await saveCheckpoint(a, '000001', 1, 'both');
    await saveCheckpoint(a, '000002', 2, 'both', { metadata: { note: 'best' } });
    runA = a.modelId;
    const b = await ec.service.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: 2 });
    b.checkpointMetadata = { run_name: 'beta' };
    await saveCheckpoint(b, '000001', 1, 'state');
    runB = b.modelId;
  });
  after(async () => {
    inProject?.close();
    await ec?.close();
  });

  it('lists checkpoints with their base model and the metadata of the save (run keys and step)', async () => {
    const list = await listRunCheckpoints(ec.service, runA);
    const best = list.find((c) => c.name === '000002' && c.kind === 'sampler')!;
    assert.strictEqual(best.baseModel, RANDOM_MODEL);
    assert.deepStrictEqual(best.userMetadata, { run_name: 'alpha', spec_file: 'alpha.grpo.json', team: 'blue', step: '2', note: 'best' });
    const first = list.find((c) => c.name === '000001' && c.kind === 'state')!;
    assert.deepStrictEqual(first.userMetadata, { run_name: 'alpha', spec_file: 'alpha.grpo.json', team: 'blue', step: '1' });
  });

  it('creates runs in the session\'s project and filters the runs listing by it', async () => {
    const blue = await ec.service.listTrainingRuns({ projectId: 'proj-blue' });
    assert.deepStrictEqual(blue.training_runs.map((r) => r.training_run_id), [runA]);
    const all = await ec.service.listTrainingRuns();
    assert.deepStrictEqual(new Set(all.training_runs.map((r) => r.training_run_id)), new Set([runA, runB]));
    const none = await ec.service.listTrainingRuns({ projectId: 'proj-none' });
    assert.strictEqual(none.training_runs.length, 0);
  });

  it('searches by metadata, type, base model and project, a page at a time', async () => {
    const bySampler = await searchCheckpoints(ec.service, { metadata: { run_name: 'alpha' }, type: 'sampler' });
    assert.deepStrictEqual(bySampler.matches.map((c) => c.tinkerPath).sort(), [`tinker://${runA}/sampler_weights/000001`, `tinker://${runA}/sampler_weights/000002`]);
    const state = await searchCheckpoints(ec.service, { type: 'state', baseModel: RANDOM_MODEL });
    assert.strictEqual(state.matches.length, 3);
    assert.ok(state.matches.every((c) => c.kind === 'state'));
    const project = await searchCheckpoints(ec.service, { projectId: 'proj-blue' });
    assert.strictEqual(project.matches.length, 4);
    assert.ok(project.matches.every((c) => c.runId === runA));
    assert.strictEqual((await searchCheckpoints(ec.service, { baseModel: 'tinker-studio/arith-gpt' })).matches.length, 0);
    const first = await searchCheckpoints(ec.service, { metadata: { run_name: 'alpha' } }, { limit: 3 });
    assert.strictEqual(first.matches.length, 3);
    assert.ok(first.next !== undefined);
    const rest = await searchCheckpoints(ec.service, { metadata: { run_name: 'alpha' } }, { from: first.next, limit: 3 });
    assert.strictEqual(rest.matches.length, 1);
    assert.strictEqual(rest.next, undefined);
    assert.strictEqual(new Set([...first.matches, ...rest.matches].map((c) => c.tinkerPath)).size, 4);
  });

  it('`tinker-studio checkpoints search` filters and pages', async () => {
    const server = ['--backend', 'custom', '--base-url', ec.engine.server.url];
    const r = await cli(['checkpoints', 'search', '--metadata', 'run_name=alpha', '--metadata', 'note=best', '--type', 'sampler', ...server]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^sampler +tinker://${runA.replace(/[.:]/g, '\\$&')}/sampler_weights/000002 .*base ${RANDOM_MODEL.replace('/', '\\/')}  .*note=best`, 'm'));
    assert.strictEqual(r.stdout.trim().split('\n').length, 1, r.stdout);
    const paged = await cli(['checkpoints', 'search', '--project', 'proj-blue', '--limit', '2', '--json', ...server]);
    assert.strictEqual(paged.code, 0, paged.stderr);
    const j = JSON.parse(paged.stdout) as { checkpoints: unknown[]; next_offset: number | null };
    assert.strictEqual(j.checkpoints.length, 2);
    assert.ok(typeof j.next_offset === 'number');
    const none = await cli(['checkpoints', 'search', '--base-model', 'no/such', ...server]);
    assert.match(none.stdout, /no checkpoint matches/);
    assert.throws(() => parseCheckpointsArgs(['search', '--metadata', 'novalue']), /write key=value/);
    assert.throws(() => parseCheckpointsArgs(['list', '--type', 'sampler']), /belongs to "checkpoints search"/);
  });

  it('reads a one-line search (the Search Checkpoints… box)', () => {
    assert.deepStrictEqual(parseSearchQuery('run_name=alpha type:sampler base:Qwen/Qwen3-8B project:p1 note="two words"'), {
      metadata: { run_name: 'alpha', note: 'two words' },
      type: 'sampler',
      baseModel: 'Qwen/Qwen3-8B',
      projectId: 'p1',
    });
    assert.deepStrictEqual(parseSearchQuery('  '), {});
    assert.throws(() => parseSearchQuery('alpha'), /is not a filter/);
    assert.throws(() => parseSearchQuery('size:3'), /unknown filter "size:"/);
  });
});
