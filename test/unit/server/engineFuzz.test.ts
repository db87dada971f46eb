// A fuzzer over the engine as the extension runs it (dist/engine.js in its own process, on
// loopback): every route the server modules register (the Tinker protocol, the OpenAI-compatible
// routes, the listings), with malformed request lines, paths, percent-encodings, headers and bodies
// (wrong types, huge numbers, deep nesting, 1 MB strings, unicode). Every request must be answered,
// none with a 5xx; afterwards the process is alive and one training step gives the same numbers
// as before the fuzz. Seeded and bounded; it reports the request count and the slowest answer.
// Needs `npm run build` first (npm test does it).
import * as assert from 'assert';
import { ServiceClient } from '../../../src/core/tinker/client';
import type { EngineProcess } from '../../../src/engine/launcher';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { sftDatum } from '../tinker/engineFixtures';
import { EngineRoute, awkwardValues, deepJson, engineRoutes, rawExchange, requestBytes, spawnBuiltEngine, type SpawnedEngine } from './engineFuzzKit';
import { mulberry32 } from '../../../src/core/data/prng';

const SEED = 43;
/** fuzzed requests per route (the fixed cases come on top) */
const PER_ROUTE = 60;
/** a request unanswered this long counts as hung (a bound, not a timing assertion) */
const HANG_MS = 120_000;
const DEEP = '"__deep_nesting__"';

/** One training step on a fresh LoRA model (seed 1) and a forward after it: the log-probs. */
async function trainingStep(service: ServiceClient): Promise<number[]> {
  const datum = sftDatum('<|im_start|>user\nWhat is 2 + 3?<|im_end|>\n<|im_start|>assistant\n5<|im_end|>');
  const tc = await service.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 1 });
  const fb = await tc.forwardBackward([datum], 'cross_entropy');
  const opt = await tc.optimStep({ learning_rate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8 });
  await fb.result();
  await opt.result();
  const out = await (await tc.forward([datum], 'cross_entropy')).result();
  return Array.from(out.loss_fn_outputs[0]!.logprobs!.data);
}

interface Ids {
  session: string;
  model: string;
  run: string;
  weights: string;
  sampler: string;
  samplerPath: string;
  request: string;
}

/** A plausible body for each route, so that mutations reach past the schema into the handlers. */
function template(route: EngineRoute, ids: Ids): Record<string, unknown> {
  const p = route.pattern.replace(/^\/(api\/v1|v1|oai\/api\/v1)\//, '');
  const datum = { model_input: { chunks: [{ type: 'encoded_text', tokens: [1, 2, 3] }] }, loss_fn_inputs: { target_tokens: { data: [2, 3, 4], dtype: 'int64' }, weights: { data: [1, 1, 1], dtype: 'float32' } } };
  switch (p) {
    case 'create_session':
      return { tags: ['fuzz'], user_metadata: { a: 'b' }, sdk_version: '0.0.0', project_id: 'p' };
    case 'session_heartbeat':
      return { session_id: ids.session };
    case 'create_model':
      return { session_id: ids.session, model_seq_id: 7, base_model: RANDOM_MODEL, lora_config: { rank: 2, seed: 3 } };
    case 'get_info':
    case 'unload_model':
      return { model_id: ids.model };
    case 'forward_backward':
      return { model_id: ids.model, seq_id: 1000, forward_backward_input: { data: [datum], loss_fn: 'cross_entropy' } };
    case 'forward':
      return { model_id: ids.model, seq_id: 1000, forward_input: { data: [datum], loss_fn: 'cross_entropy' } };
    case 'optim_step':
      return { model_id: ids.model, seq_id: 1000, adam_params: { learning_rate: 1e-3 } };
    case 'save_weights':
      return { model_id: ids.model, seq_id: 1000, path: 'fz', ttl_seconds: 60 };
    case 'save_weights_for_sampler':
      return { model_id: ids.model, seq_id: 1000, path: 'fzs', ttl_seconds: 60 };
    case 'load_weights':
      return { model_id: ids.model, seq_id: 1, path: `tinker://${ids.run}/${ids.weights}` };
    case 'weights_info':
      return { tinker_path: `tinker://${ids.run}/${ids.weights}` };
    case 'create_sampling_session':
      return { session_id: ids.session, sampling_session_seq_id: 5, model_path: ids.samplerPath };
    case 'asample':
      return { base_model: RANDOM_MODEL, num_samples: 1, prompt: { chunks: [{ type: 'encoded_text', tokens: [1, 2] }] }, sampling_params: { max_tokens: 2, temperature: 1 } };
    case 'retrieve_future':
      return { request_id: ids.request };
    case 'chat/completions':
      return { model: RANDOM_MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'number' } } } } }] };
    case 'completions':
      return { model: RANDOM_MODEL, prompt: 'hi', max_tokens: 2 };
    default:
      if (p.endsWith('/ttl')) return { ttl_seconds: 60 };
      return {};
  }
}

/** Every leaf path of a JSON value (objects and arrays), the value itself included as []. */
function paths(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...at, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) paths(x, [...at, k], out);
  return out;
}

function setAt(v: unknown, at: (string | number)[], value: unknown): unknown {
  if (at.length === 0) return value;
  const copy = (Array.isArray(v) ? [...v] : { ...(v as object) }) as Record<string | number, unknown>;
  copy[at[0]!] = setAt(copy[at[0]!], at.slice(1), value);
  return copy;
}

describe('engine fuzz (dist/engine.js): every request answered, no 5xx, the engine still trains', function () {
  this.timeout(900_000);
  let engine: SpawnedEngine | undefined;
  let proc: EngineProcess | undefined;
  let service: ServiceClient | undefined;
  let log: string[] = [];

  before(async () => {
    engine = await spawnBuiltEngine('tinker-engine-fuzz-');
    ({ proc, service, log } = engine);
  });
  after(async () => {
    await engine?.close();
  });

  it('fuzzes every route, request line, path, header and body', async () => {
    const p = proc!;
    const port = Number(new URL(p.url).port);
    const host = `127.0.0.1:${port}`;
    const auth: Array<[string, string]> = [['x-api-key', p.apiKey]];
    const json: Array<[string, string]> = [...auth, ['Content-Type', 'application/json']];
    // mulberry32: a failure reproduces from its seed
    const rnd = mulberry32(SEED);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;

    const reference = await trainingStep(service!);

    // real ids, so that mutated requests reach a handler's later checks
    const tc = await service!.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: 5 });
    const saved = await (await tc.saveState('fz-weights')).result();
    const sampler = await (await tc.saveWeightsForSampler('fz-sampler')).result();
    const ids: Ids = {
      session: service!.sessionId!,
      model: tc.modelId,
      run: tc.modelId,
      weights: saved.path.split('/').slice(-2).join('/'),
      sampler: `${service!.sessionId}:sample:0`,
      samplerPath: sampler.path!,
      request: 'no-such-request',
    };

    const routes = engineRoutes();
    assert.ok(routes.length >= 30 && routes.some((r) => r.pattern === '/v1/chat/completions') && routes.some((r) => r.pattern === '/api/v1/asample'), `the route table was read: ${routes.length} routes`);

    let requests = 0;
    let slowest = { ms: 0, what: '' };
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    async function send(what: string, bytes: Buffer, cutShort = false): Promise<void> {
      requests++;
      let a;
      try {
        a = await rawExchange(port, bytes, HANG_MS, cutShort);
      } catch (err) {
        failures.push(`${what}: ${(err as Error).message}`);
        return;
      }
      if (a.ms > slowest.ms) slowest = { ms: a.ms, what };
      statuses.set(a.status ?? 0, (statuses.get(a.status ?? 0) ?? 0) + 1);
      // a request the client cut short cannot be answered; it must only not harm the engine
      if ((a.status === undefined && !cutShort) || (a.status ?? 0) >= 500) failures.push(`${what}: ${a.status ?? 'no status line'}\n${a.text}`);
    }
    const req = (method: string, target: string, headers: Array<[string, string]>, body?: Buffer | string) => requestBytes({ method, target, host, headers, ...(body !== undefined ? { body } : {}) });

    // a concrete path for a route pattern: real ids, or awkward segments
    const segment = () => pick(['x', '%E0%A4%A', '%zz', '%00', '%2F..%2F', encodeURIComponent('😀\ud7ff'), 'a'.repeat(3000), '..', '%C0%AF', encodeURIComponent(ids.run), encodeURIComponent(ids.weights), ids.weights]);
    const concrete = (route: EngineRoute, real: boolean) =>
      route.pattern.replace(/\{(\w+)\}\*?/g, (_, name: string) => {
        if (!real) return segment();
        return name === 'run' ? encodeURIComponent(ids.run) : name === 'ckpt' ? ids.weights : name === 'id' ? encodeURIComponent(ids.sampler) : 'tok.tar';
      });
    const awkward = awkwardValues();

    for (const route of routes) {
      const base = template(route, ids);
      const leafs = paths(base);
      for (let i = 0; i < PER_ROUTE; i++) {
        const target = concrete(route, i % 3 !== 0) + (i % 5 === 0 ? pick(['?limit=-1&offset=1e308', '?limit=%E0%A4%A', '?a=%zz&&=&', '?project_id=%00', '?model_id=' + 'q'.repeat(5000)]) : '');
        let body: string | Buffer;
        const kind = rnd();
        if (kind < 0.55) {
          // one field (or the whole body) replaced by an awkward value
          const value = rnd() < 0.1 ? DEEP : pick(awkward);
          body = JSON.stringify(setAt(base, pick(leafs), value)).replace(DEEP, deepJson(100_000));
        } else if (kind < 0.7) {
          body = JSON.stringify(base);
        } else if (kind < 0.8) {
          body = pick(['', '{', 'null', '[]', '"x"', '1e999', '{"a":1,"a":2}', '\ufeff{}', deepJson(1_000_000), '{"x":' + '"\\ud800"' + '}', Buffer.from([0xff, 0xfe, 0x00, 0x80]).toString('latin1')]);
        } else {
          body = Buffer.from(Array.from({ length: Math.floor(rnd() * 512) }, () => Math.floor(rnd() * 256)));
        }
        const headerSet = rnd();
        const headers: Array<[string, string]> =
          headerSet < 0.75
            ? json
            : pick<Array<[string, string]>>([
                [...auth, ['Content-Type', 'text/plain']],
                [...json, ['Content-Encoding', 'zstd']],
                [...json, ['Content-Encoding', 'gzip, br']],
                [...json, ['Accept', 'application/x-protobuf']],
                [['x-api-key', 'wrong'], ['Content-Type', 'application/json']],
                [['Authorization', 'Bearer ' + p.apiKey], ['Content-Type', 'application/json']],
                [...json, ['Origin', 'http://evil.example']],
                [...auth, ['Content-Type', 'application/x-protobuf']],
                [...json, ['X-Odd', 'ä\u00ff'], ['x-api-key', p.apiKey]],
              ]);
        await send(`${route.method} ${target.slice(0, 120)} (case ${i})`, req(route.method, target, headers, body));
      }
      // the route with the wrong method, and with no key at all
      await send(`PATCH ${route.pattern}`, req('PATCH', concrete(route, true), json, '{}'));
      await send(`${route.method} ${route.pattern} without a key`, req(route.method, concrete(route, true), [['Content-Type', 'application/json']], '{}'));
    }

    // request lines and headers no HTTP client sends: over raw TCP
    const lines = [
      'GET http://:80/ HTTP/1.1',
      'GET http://[ HTTP/1.1',
      'GET http://[::1 HTTP/1.1',
      'GET http://a b/ HTTP/1.1',
      'GET http://127.0.0.1:99999/api/v1/healthz HTTP/1.1',
      `GET http://${host}/api/v1/healthz HTTP/1.1`,
      'GET * HTTP/1.1',
      'OPTIONS * HTTP/1.1',
      'GET //api/v1/healthz HTTP/1.1',
      'GET ///// HTTP/1.1',
      'GET ? HTTP/1.1',
      'GET /api/v1/sessions/%E0%A4%A HTTP/1.1',
      'GET /v1/models/%E0%A4%A HTTP/1.1',
      'GET /oai/api/v1/%ZZ HTTP/1.1',
      'GET /api/v1/../../../etc/passwd HTTP/1.1',
      'GET /api/v1/%2e%2e/%2e%2e/etc/passwd HTTP/1.1',
      'GET /api/v1/healthz HTTP/9.9',
      'GET /api/v1/healthz HTTP/1.0',
      'BREW /api/v1/healthz HTTP/1.1',
      'get /api/v1/healthz HTTP/1.1',
      'GET /api/v1/healthz',
      'GET',
      '',
      'GET /\u0000 HTTP/1.1',
      'GET /\u00ff\u00fe HTTP/1.1',
      `GET /${'a'.repeat(100_000)} HTTP/1.1`,
      'POST /api/v1/training_runs/%E0%A4%A/checkpoints/weights/x/publish HTTP/1.1',
      'DELETE /api/v1/training_runs/x/checkpoints/%C0 HTTP/1.1',
    ];
    for (const line of lines) {
      const head = `${line}\r\nHost: ${host}\r\nx-api-key: ${p.apiKey}\r\nConnection: close\r\n\r\n`;
      await send(`request line ${JSON.stringify(line.slice(0, 80))}`, Buffer.from(head, 'latin1'));
    }
    const headerCases: Array<[string, string]> = [
      ['no Host', `GET /api/v1/healthz HTTP/1.1\r\nx-api-key: ${p.apiKey}\r\nConnection: close\r\n\r\n`],
      ['two Hosts', `GET /api/v1/healthz HTTP/1.1\r\nHost: ${host}\r\nHost: evil\r\nConnection: close\r\n\r\n`],
      ['a huge header', `GET /api/v1/healthz HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${'b'.repeat(200_000)}\r\nConnection: close\r\n\r\n`],
      ['a header without a colon', `GET /api/v1/healthz HTTP/1.1\r\nHost: ${host}\r\nnocolon\r\nConnection: close\r\n\r\n`],
      ['Content-Length: -1', `POST /api/v1/create_session HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${p.apiKey}\r\nContent-Type: application/json\r\nContent-Length: -1\r\nConnection: close\r\n\r\n{}`],
      ['Content-Length past 64 MiB', `POST /api/v1/create_session HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${p.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 99999999999999999999\r\nConnection: close\r\n\r\n{}`],
      ['a bad chunk', `POST /api/v1/create_session HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${p.apiKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`],
      ['both Content-Length and chunked', `POST /api/v1/create_session HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${p.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`],
      ['an Upgrade to websocket', `GET /api/v1/healthz HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${p.apiKey}\r\nConnection: Upgrade, close\r\nUpgrade: websocket\r\n\r\n`],
      ['an Upgrade to h2c', `POST /v1/chat/completions HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${p.apiKey}\r\nConnection: Upgrade, HTTP2-Settings, close\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\nContent-Length: 0\r\n\r\n`],
      ['CONNECT to a host', `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`],
      ['an HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'],
      ['random bytes', Buffer.from(Array.from({ length: 300 }, () => Math.floor(rnd() * 256))).toString('latin1')],
    ];
    for (const [what, text] of headerCases) await send(what, Buffer.from(text, 'latin1'));
    await send('a body shorter than its Content-Length, then the client ends', Buffer.from(`POST /api/v1/create_session HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${p.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{}`, 'latin1'), true);
    // request lines built from random pieces
    for (let i = 0; i < 150; i++) {
      const method = pick(['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH', 'CONNECT', 'TRACE', 'X']);
      const target = pick(['', '/', 'http://', 'http://:0', 'https://[', '//', '/api/v1/', '/v1/', '*', '%', 'a']) + pick(['', segment(), `${segment()}/${segment()}`]) + pick(['', '?', '?%', '#x', ' ']);
      await send(`random request line ${method} ${JSON.stringify(target.slice(0, 80))}`, req(method, target, json, pick(['', '{}', 'x'])));
    }

    const exitedEarly = await Promise.race([p.exited.then(() => true), new Promise<boolean>((r) => setImmediate(() => r(false)))]);
    const answered5xx = [...statuses].filter(([s]) => s >= 500).reduce((a, [, n]) => a + n, 0);
    console.log(
      `      engine fuzz: ${requests} requests (seed ${SEED}), ${answered5xx} answered 5xx, ${failures.length} failures; slowest answer ${Math.round(slowest.ms)} ms (${slowest.what}); statuses ${[...statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`).join(' ')}`,
    );
    assert.deepStrictEqual(failures.slice(0, 20), [], `${failures.length} requests were not answered, or answered 5xx`);
    assert.strictEqual(exitedEarly, false, `the engine process ended:\n${log.slice(-20).join('\n')}`);
    const health = await fetch(`${p.url}/api/v1/healthz`, { headers: { 'x-api-key': p.apiKey } });
    assert.strictEqual(health.status, 200);
    assert.deepStrictEqual(await trainingStep(service!), reference, 'one training step gives the same log-probs as before the fuzz');
  });
});
