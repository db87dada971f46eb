// The Tinker client's own overhead, without any server compute: one forward_backward of 1024 datums ×
// 512 tokens, and 1,000 sample results. The server is a stand-in of a Tinker server: a real HTTP
// server on 127.0.0.1 in a worker thread (its own event loop, so its work is not counted as the
// client's) that answers every call at once with valid protocol responses prepared in advance.
// Printed per case: the encode or decode alone, the whole call over loopback HTTP (wall time), and
// how long the client's thread was busy during it (event-loop utilisation: the client's own CPU
// time — encode, HTTP, decode, zod, futures — without the time spent waiting for the stand-in).
// Prints figures; asserts nothing.   BENCH=client node scripts/bench.mjs
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import { ServiceClient, chunkDatums } from '../src/core/tinker/client';
import { decodeForwardBackwardOutput, decodeSampleResponse, encodeForwardBackwardOutput, encodeForwardBackwardRequest, encodeSampleResponse } from '../src/core/tinker/proto';
import { ClientConfigResponse, RetrieveFutureRequest } from '../src/core/tinker/wire';
import { Datum, ForwardBackwardOutput, SampleResponse, textInput } from '../src/core/tinker/types';

const DATUMS = 1024;
const TOKENS = 512;
const SAMPLES = 1000;
const SAMPLE_TOKENS = 64;

function fbOutput(n: number): ForwardBackwardOutput {
  const outs = Array.from({ length: n }, (_, i) => ({
    logprobs: { dtype: 'float32' as const, data: Float32Array.from({ length: TOKENS }, (_, t) => -((i + t) % 97) / 10), shape: [TOKENS] },
    elementwise_loss: { dtype: 'float32' as const, data: Float32Array.from({ length: TOKENS }, (_, t) => ((i * t) % 89) / 10), shape: [TOKENS] },
  }));
  return { loss_fn_output_type: 'ArrayRecord', loss_fn_outputs: outs, metrics: { 'loss:sum': 1234.5 } };
}

function sampleResponse(): SampleResponse {
  return {
    type: 'sample',
    sequences: [{ stop_reason: 'length', tokens: Array.from({ length: SAMPLE_TOKENS }, (_, i) => (i * 7) % 259), logprobs: Array.from({ length: SAMPLE_TOKENS }, (_, i) => -i / 50) }],
    prompt_logprobs: null,
    topk_prompt_logprobs: null,
    prompt_cache_hit_tokens: 0,
  };
}

/** Number of datums (field 3) in a ForwardBackwardRequest, found by skipping fields (no decoding). */
function countDatums(b: Buffer): number {
  let i = 0;
  let n = 0;
  const varint = () => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const x = b[i++]!;
      v += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) return v;
      shift += 7;
    }
  };
  while (i < b.length) {
    const tag = varint();
    const wire = tag & 7;
    if (tag >>> 3 === 3) n++;
    if (wire === 0) varint();
    else if (wire === 1) i += 8;
    else if (wire === 2) i += varint();
    else if (wire === 5) i += 4;
  }
  return n;
}

/** Stand-in of a Tinker server: answers at once, with responses prepared before the clock starts. */
function standInServer(): void {
  const fbCache = new Map<number, Buffer>();
  const fbBytes = (n: number) => {
    let b = fbCache.get(n);
    if (!b) fbCache.set(n, (b = Buffer.from(encodeForwardBackwardOutput(fbOutput(n)))));
    return b;
  };
  const sampleBytes = Buffer.from(encodeSampleResponse(sampleResponse()));
  let counter = 0;
  const pending = new Map<string, number>();
  const json = (res: http.ServerResponse, v: unknown) => {
    const body = JSON.stringify(v);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  const proto = (res: http.ServerResponse, b: Buffer) => {
    res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': b.length });
    res.end(b);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const p = req.url ?? '';
      if (p.endsWith('/client/config')) return json(res, {});
      if (p.endsWith('/create_session')) return json(res, { type: 'create_session', session_id: 'stand-in' });
      if (p.endsWith('/session_heartbeat')) return json(res, { type: 'session_heartbeat' });
      if (p.endsWith('/create_model')) return json(res, { request_id: 'cm', model_id: 'stand-in:train:0' });
      if (p.endsWith('/create_sampling_session')) return json(res, { type: 'create_sampling_session', sampling_session_id: 'stand-in:sample:0' });
      if (p.endsWith('/forward_backward')) {
        const id = `fb-${++counter}`;
        pending.set(id, countDatums(body));
        return json(res, { request_id: id });
      }
      if (p.endsWith('/asample')) return json(res, { request_id: `s-${++counter}` });
      if (p.endsWith('/retrieve_future')) {
        const id = RetrieveFutureRequest.parse(JSON.parse(body.toString('utf8'))).request_id;
        if (id === 'cm') return json(res, { model_id: 'stand-in:train:0', type: 'create_model' });
        if (id.startsWith('fb-')) return proto(res, fbBytes(pending.get(id)!));
        return proto(res, sampleBytes);
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: `stand-in: no ${p}` }));
    });
  });
  server.listen(0, '127.0.0.1', () => {
    // prepare the answers for the chunk sizes the client will send, before the clock starts
    const cfg = ClientConfigResponse.parse({});
    for (const c of chunkDatums(makeData(), cfg.fwdbwd_max_chunk_len, cfg.fwdbwd_max_chunk_bytes_count)) fbBytes(c.length);
    parentPort!.postMessage({ port: (server.address() as AddressInfo).port });
  });
}

function makeData(): Datum[] {
  return Array.from({ length: DATUMS }, (_, i) => {
    const toks = Array.from({ length: TOKENS + 1 }, (_, t) => (i * 31 + t * 7) % 259);
    return {
      model_input: textInput(toks.slice(0, -1)),
      loss_fn_inputs: {
        target_tokens: { dtype: 'int64', data: toks.slice(1) },
        weights: { dtype: 'float32', data: toks.slice(1).map((t) => (t % 3 === 0 ? 0 : 1)) },
      },
    };
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Wall time and the busy time of this thread's event loop, median over `reps` after `warm` runs. */
async function measure(reps: number, warm: number, fn: () => Promise<unknown> | unknown): Promise<{ wall: number; busy: number }> {
  for (let i = 0; i < warm; i++) await fn();
  const walls: number[] = [];
  const busys: number[] = [];
  for (let i = 0; i < reps; i++) {
    const elu0 = performance.eventLoopUtilization();
    const t0 = performance.now();
    await fn();
    const wall = performance.now() - t0;
    const elu = performance.eventLoopUtilization(elu0);
    walls.push(wall);
    busys.push(elu.active);
  }
  return { wall: median(walls), busy: median(busys) };
}

const ms = (x: number) => `${x.toFixed(1).padStart(8)} ms`;

async function main(): Promise<void> {
  const worker = new Worker(__filename);
  const port = await new Promise<number>((resolve) => worker.once('message', (m: { port: number }) => resolve(m.port)));
  const client = await ServiceClient.connect({ baseUrl: `http://127.0.0.1:${port}`, clientVersion: 'bench', heartbeatIntervalMs: 3_600_000 });
  try {
    const data = makeData();
    const cfg = client.config;
    const chunks = chunkDatums(data, cfg.fwdbwd_max_chunk_len, cfg.fwdbwd_max_chunk_bytes_count);
    const encoded = chunks.map((c, i) => encodeForwardBackwardRequest({ model_id: 'm', seq_id: i + 1, data: c, loss_fn: 'cross_entropy' }));
    const outBytes = chunks.map((c) => encodeForwardBackwardOutput(fbOutput(c.length)));
    const mb = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
    console.log(`Tinker client overhead (Node ${process.versions.node}; server: a stand-in answering at once from a worker thread)`);
    console.log(
      `forward_backward: ${DATUMS} datums × ${TOKENS} tokens (cross_entropy: tokens, int64 targets, float32 weights) → ${chunks.length} chunk(s) by the SDK's limits; ` +
        `request ${mb(encoded.reduce((a, b) => a + b.length, 0))} protobuf, result ${mb(outBytes.reduce((a, b) => a + b.length, 0))} (logprobs + elementwise_loss per datum)`,
    );
    const enc = await measure(5, 1, () => chunks.forEach((c, i) => encodeForwardBackwardRequest({ model_id: 'm', seq_id: i + 1, data: c, loss_fn: 'cross_entropy' })));
    const dec = await measure(5, 1, () => outBytes.forEach((b) => decodeForwardBackwardOutput(b)));
    const tc = await client.createLoraTrainingClient('stand-in/model', { rank: 8 });
    const whole = await measure(5, 2, async () => (await tc.forwardBackward(data, 'cross_entropy')).result());
    console.log(`  encode (protobuf, all chunks)          ${ms(enc.wall)}`);
    console.log(`  decode (ForwardBackwardOutput)         ${ms(dec.wall)}`);
    console.log(`  whole call: submit + poll over HTTP    ${ms(whole.wall)} wall, ${ms(whole.busy)} client thread busy`);

    const sBytes = encodeSampleResponse(sampleResponse());
    const sdec = await measure(5, 1, () => {
      for (let i = 0; i < SAMPLES; i++) decodeSampleResponse(sBytes);
    });
    const sampler = await client.createSamplingClient({ baseModel: 'stand-in/model' });
    const prompt = textInput(Array.from({ length: 32 }, (_, i) => i + 40));
    const sall = await measure(3, 1, () => Promise.all(Array.from({ length: SAMPLES }, (_, i) => sampler.sample(prompt, { max_tokens: SAMPLE_TOKENS, temperature: 1, seed: i }))));
    console.log(`sampling: ${SAMPLES} results of 1 sequence × ${SAMPLE_TOKENS} tokens with logprobs (${sBytes.length} B each), 32-token prompts, all in flight at once`);
    console.log(`  decode (SampleResponse) × ${SAMPLES}          ${ms(sdec.wall)}  (${((sdec.wall * 1000) / SAMPLES).toFixed(1)} µs per result)`);
    console.log(
      `  whole calls: asample + poll × ${SAMPLES}      ${ms(sall.wall)} wall, ${ms(sall.busy)} client thread busy  (${((sall.busy * 1000) / SAMPLES).toFixed(0)} µs busy per result)`,
    );
  } finally {
    client.close();
    await worker.terminate();
  }
}

if (isMainThread) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
} else {
  standInServer();
}
