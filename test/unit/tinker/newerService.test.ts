// A newer Tinker service than the client was written for: every listing the client reads (training
// runs, a run's checkpoints, the user's checkpoints, sessions, a session, capabilities, futures)
// answers with enum values this client does not know and fields it has never seen. Served by a
// stand-in of the cloud (a real HTTP server on 127.0.0.1 with canned bodies in the shape of the
// service's newer API reference — the cloud itself cannot run here). The client must read them all,
// keep the unknown values as strings, and the `tinker-studio checkpoints list` CLI must print them.
import * as assert from 'assert';
import { spawn } from 'child_process';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as path from 'path';
import { listRunCheckpoints } from '../../../src/core/checkpoints/manage';
import { ServiceClient } from '../../../src/core/tinker/client';

const CLI = path.join(__dirname, '../../../src/cli/main.js');
const RUN = 'run-newer:train:0';
const NOW = '2026-11-20T10:00:00Z';
/** a field no version of the client knows, added to every object the stand-in sends */
const EXTRA = { added_in_0_99: { nested: [1, 'two'] } };

const checkpoint = (type: string, id: string, more: Record<string, unknown> = {}) => ({
  checkpoint_id: id,
  checkpoint_type: type,
  time: NOW,
  tinker_path: `tinker://${RUN}/${id}`,
  size_bytes: 1234,
  public: false,
  expires_at: null,
  ...EXTRA,
  ...more,
});

const CHECKPOINTS = [
  checkpoint('training', 'weights/000010', { base_model: 'Qwen/Qwen3-8B', user_metadata: { run_name: 'demo', step: 10 } }),
  checkpoint('sampler', 'sampler_weights/000010', { base_model: 'Qwen/Qwen3-8B' }),
  checkpoint('external', 'external_weights/uploaded'),
  checkpoint('quantized', 'sampler_weights/q4'),
];

/** What the stand-in answers, by method and path; `seen` records each request. */
function standIn() {
  const seen: string[] = [];
  let polls = 0;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push(`${req.method} ${url.pathname}`);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    req.resume();
    req.on('end', () => {
      switch (`${req.method} ${url.pathname}`) {
        case 'POST /api/v1/client/config':
          return send(200, { ...EXTRA, new_flag: true });
        case 'POST /api/v1/create_session':
          return send(200, { session_id: 'sess-1', info_message: null, ...EXTRA });
        case 'POST /api/v1/session_heartbeat':
          return send(200, { type: 'session_heartbeat', ...EXTRA });
        case 'GET /api/v1/get_server_capabilities':
          return send(200, {
            supported_models: [
              { model_name: 'Qwen/Qwen3-8B', max_context_length: 32768, modalities: ['text'], kind: 'reasoning', ...EXTRA },
              { model_name: 'thinkingmachines/Inkling:peft:262144', capabilities: ['chat', 'vision-2'], training_types: ['lora', 'full-2027'] },
            ],
            ...EXTRA,
          });
        case 'GET /api/v1/training_runs':
          return send(200, {
            training_runs: [
              {
                training_run_id: RUN,
                base_model: 'Qwen/Qwen3-8B',
                model_owner: 'me',
                is_lora: true,
                lora_rank: 32,
                last_request_time: NOW,
                last_checkpoint: CHECKPOINTS[0],
                last_sampler_checkpoint: CHECKPOINTS[3],
                user_metadata: { team: 'a', retries: 3 },
                status: 'archived-cold',
                project_id: 'proj-1',
                ...EXTRA,
              },
            ],
            cursor: { offset: 0, limit: 20, total_count: 1, next_cursor: 'abc' },
            ...EXTRA,
          });
        case `GET /api/v1/training_runs/${encodeURIComponent(RUN)}/checkpoints`:
          return send(200, { checkpoints: CHECKPOINTS, cursor: null, ...EXTRA });
        case 'GET /api/v1/checkpoints':
          return send(200, { checkpoints: CHECKPOINTS, cursor: { offset: 0, limit: 100, total_count: 4 }, ...EXTRA });
        case 'GET /api/v1/sessions':
          return send(200, { sessions: ['sess-1', { session_id: 'sess-2', status: 'hibernating', ...EXTRA }], ...EXTRA });
        case 'GET /api/v1/sessions/sess-1':
          return send(200, { training_run_ids: [RUN], sampler_ids: ['samp-1'], status: 'hibernating', ...EXTRA });
        case 'POST /api/v1/create_sampling_session':
          return send(200, { sampling_session_id: 'samp-1', type: 'create_sampling_session', ...EXTRA });
        case 'POST /api/v1/asample':
          return send(200, { request_id: 'fut-1', model_id: null, ...EXTRA });
        case 'POST /api/v1/retrieve_future':
          polls++;
          if (polls === 1) return send(200, { type: 'try_again', request_id: 'fut-1', queue_state: 'warming_up_gpus', queue_state_reason: 'a new reason', ...EXTRA });
          return send(200, {
            type: 'sample',
            sequences: [
              { stop_reason: 'tool_call', tokens: [1, 2], logprobs: [-0.1, -0.2], ...EXTRA },
              { stop_reason: 'length', tokens: [3], logprobs: [-0.3] },
            ],
            prompt_logprobs: null,
            ...EXTRA,
          });
        default:
          return send(404, { detail: `stand-in has no ${req.method} ${url.pathname}` });
      }
    });
  });
  return { server, seen };
}

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, TINKER_API_KEY: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve) => proc.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('a newer Tinker service (stand-in): unknown enum values and fields', function () {
  this.timeout(60_000);
  let stand: ReturnType<typeof standIn>;
  let url: string;
  let client: ServiceClient;
  const queue: string[] = [];

  before(async () => {
    stand = standIn();
    await new Promise<void>((r) => stand.server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(stand.server.address() as AddressInfo).port}`;
    client = await ServiceClient.connect({ baseUrl: url, clientVersion: 'test', heartbeatIntervalMs: 60_000, onQueueState: (e) => queue.push(e.queueState) });
  });
  after(async () => {
    client?.close();
    stand.server.closeAllConnections();
    await new Promise((r) => stand.server.close(r));
  });

  it('reads capabilities, runs, checkpoints, sessions and a session with unknown values kept', async () => {
    const caps = await client.capabilities();
    assert.deepStrictEqual(caps.supported_models.map((m) => m.model_name), ['Qwen/Qwen3-8B', 'thinkingmachines/Inkling:peft:262144']);
    assert.deepStrictEqual((caps.supported_models[1] as Record<string, unknown>).capabilities, ['chat', 'vision-2'], 'unknown fields are kept');

    const runs = await client.listTrainingRuns();
    assert.strictEqual(runs.training_runs[0]!.last_sampler_checkpoint?.checkpoint_type, 'quantized');
    assert.deepStrictEqual(runs.training_runs[0]!.user_metadata, { team: 'a', retries: '3' }, 'metadata values read as text');
    assert.strictEqual((runs.training_runs[0] as Record<string, unknown>).status, 'archived-cold');

    const mine = await client.listUserCheckpoints();
    assert.deepStrictEqual(mine.checkpoints.map((c) => c.checkpoint_type), ['training', 'sampler', 'external', 'quantized']);

    const list = await listRunCheckpoints(client, RUN);
    assert.deepStrictEqual(
      list.map((c) => [c.name, c.kind, c.type, c.manageable]),
      [
        ['000010', 'state', 'training', true],
        ['000010', 'sampler', 'sampler', true],
        ['uploaded', 'external', 'external', false],
        ['q4', 'quantized', 'quantized', true],
      ],
    );
    assert.strictEqual(list.find((c) => c.kind === 'state')?.baseModel, 'Qwen/Qwen3-8B');
    assert.deepStrictEqual(list.find((c) => c.kind === 'state')?.userMetadata, { run_name: 'demo', step: '10' });

    const sessions = await client.listSessions();
    assert.deepStrictEqual(sessions.sessions, ['sess-1', 'sess-2']);
    const one = await client.getSession('sess-1');
    assert.deepStrictEqual([one.training_run_ids, one.sampler_ids], [[RUN], ['samp-1']]);
  });

  it('resolves a future through an unknown queue state into sequences with an unknown stop reason', async () => {
    const sc = await client.createSamplingClient({ baseModel: 'Qwen/Qwen3-8B' });
    const r = await sc.sample({ chunks: [{ type: 'encoded_text', tokens: [5, 6] }] }, { max_tokens: 4, temperature: 1, top_k: -1, top_p: 1 });
    assert.deepStrictEqual(r.sequences.map((s) => s.stop_reason), ['tool_call', 'length']);
    assert.deepStrictEqual(queue, ['warming_up_gpus'], 'the unknown queue state is reported as it is');
    assert.ok(stand.seen.filter((s) => s === 'POST /api/v1/retrieve_future').length >= 2, 'the future was polled through try_again');
  });

  it('`tinker-studio checkpoints list --run` prints every checkpoint, the unknown types as the server names them', async () => {
    const r = await cli(['checkpoints', 'list', '--run', RUN, '--backend', 'custom', '--base-url', url]);
    assert.strictEqual(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.strictEqual(lines.length, 4, r.stdout);
    assert.ok(lines.some((l) => /^external +tinker:\/\/run-newer:train:0\/external_weights\/uploaded  /.test(l)), r.stdout);
    assert.ok(lines.some((l) => /^quantized +tinker:\/\/run-newer:train:0\/sampler_weights\/q4  /.test(l)), r.stdout);
    assert.ok(lines.some((l) => /^state +\S+weights\/000010 .* base Qwen\/Qwen3-8B  run_name=demo,step=10$/.test(l)), r.stdout);
    const json = await cli(['checkpoints', 'list', '--run', RUN, '--json', '--backend', 'custom', '--base-url', url]);
    assert.strictEqual(json.code, 0, json.stderr);
    const rows = JSON.parse(json.stdout) as Array<{ kind: string; type: string }>;
    assert.deepStrictEqual(rows.map((x) => x.type).sort(), ['external', 'quantized', 'sampler', 'training']);
  });
});
