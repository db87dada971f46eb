// The protobuf codec against the protocol document's test vectors (Appendix A), byte for byte.
import * as assert from 'assert';
import {
  decodeForwardBackwardOutput,
  decodeForwardBackwardRequest,
  decodeSampleResponse,
  encodeForwardBackwardOutput,
  encodeForwardBackwardRequest,
  encodeSampleResponse,
} from '../../../src/core/tinker/proto';
import { ProtoReader, ProtoWriter } from '../../../src/core/tinker/protobuf';
import { ForwardBackwardRequestData } from '../../../src/core/tinker/types';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const bytes = (h: string) => new Uint8Array(Buffer.from(h, 'hex'));

const VECTOR_1 =
  '0a016d10011a220a080a060a040100000012160a0777656967687473120b0a040000803f1801220101220d63726f73735f656e74726f70792a0f0a0462657461119a9999999999b93f3001';
const VECTOR_2 =
  '0a0b41727261795265636f7264123a12360a086c6f6770726f6273122a0a0c000000bf000080bf000080be1218000000000000000008000000000000000c00000000000000180118021a130a086c6f73733a73756d11000000000000f83f';
const VECTOR_3 = '0a160801120807000000090000001a08000000bf000080bf12080000c07f000000c0';

const request1: ForwardBackwardRequestData = {
  model_id: 'm',
  seq_id: 1,
  loss_fn: 'cross_entropy',
  forward_only: true,
  loss_fn_config: { beta: 0.1 },
  data: [
    {
      model_input: { chunks: [{ type: 'encoded_text', tokens: [1] }] },
      loss_fn_inputs: { weights: { data: [1.0], dtype: 'float32', shape: [1] } },
    },
  ],
};

describe('protobuf codec (protocol Appendix A)', () => {
  it('vector 1: encodes ForwardBackwardRequest byte for byte', () => {
    assert.strictEqual(hex(encodeForwardBackwardRequest(request1)), VECTOR_1);
  });

  it('vector 1: decodes back to the same request', () => {
    const r = decodeForwardBackwardRequest(bytes(VECTOR_1));
    assert.strictEqual(r.model_id, 'm');
    assert.strictEqual(r.seq_id, 1);
    assert.strictEqual(r.loss_fn, 'cross_entropy');
    assert.strictEqual(r.forward_only, true);
    assert.deepStrictEqual(r.loss_fn_config, { beta: 0.1 });
    const chunk = r.data[0]!.model_input.chunks[0]!;
    assert.ok(chunk.type === 'encoded_text');
    assert.deepStrictEqual(Array.from(chunk.tokens), [1]);
    const w = r.data[0]!.loss_fn_inputs.weights!;
    assert.deepStrictEqual([w.dtype, Array.from(w.data), w.shape], ['float32', [1], [1]]);
  });

  it('vector 2: decodes ForwardBackwardOutput into per-datum logprobs and metrics', () => {
    const out = decodeForwardBackwardOutput(bytes(VECTOR_2));
    assert.strictEqual(out.loss_fn_output_type, 'ArrayRecord');
    assert.deepStrictEqual(out.metrics, { 'loss:sum': 1.5 });
    assert.strictEqual(out.loss_fn_outputs.length, 2);
    assert.deepStrictEqual(Array.from(out.loss_fn_outputs[0]!.logprobs!.data), [-0.5, -1.0]);
    assert.deepStrictEqual(out.loss_fn_outputs[0]!.logprobs!.shape, [2]);
    assert.deepStrictEqual(Array.from(out.loss_fn_outputs[1]!.logprobs!.data), [-0.25]);
    assert.deepStrictEqual(out.loss_fn_outputs[1]!.logprobs!.shape, [1]);
  });

  it('vector 2: the engine-side encoder reproduces it byte for byte', () => {
    const enc = encodeForwardBackwardOutput({
      loss_fn_output_type: 'ArrayRecord',
      metrics: { 'loss:sum': 1.5 },
      loss_fn_outputs: [
        { logprobs: { dtype: 'float32', data: [-0.5, -1.0], shape: [2] } },
        { logprobs: { dtype: 'float32', data: [-0.25], shape: [1] } },
      ],
    });
    assert.strictEqual(hex(enc), VECTOR_2);
  });

  it('vector 3: SampleResponse decodes (NaN prompt logprob → null) and re-encodes byte for byte', () => {
    const res = decodeSampleResponse(bytes(VECTOR_3));
    assert.deepStrictEqual(res.sequences, [{ stop_reason: 'length', tokens: [7, 9], logprobs: [-0.5, -1.0] }]);
    assert.deepStrictEqual(res.prompt_logprobs, [null, -2.0]);
    assert.strictEqual(
      hex(encodeSampleResponse({ sequences: res.sequences, prompt_logprobs: res.prompt_logprobs })),
      VECTOR_3,
    );
  });

  it('round-trips top-k prompt logprobs with empty rows and trailing empty cells', () => {
    const topk: Array<Array<[number, number]> | null> = [null, [[5, -0.5], [6, -1.5]], [[9, -0.25]]];
    const res = decodeSampleResponse(encodeSampleResponse({ sequences: [{ stop_reason: 'stop', tokens: [1], logprobs: null }], topk_prompt_logprobs: topk }));
    assert.deepStrictEqual(res.topk_prompt_logprobs, topk);
    assert.deepStrictEqual(res.sequences, [{ stop_reason: 'stop', tokens: [1], logprobs: null }]);
  });

  it('round-trips int64 targets, sparse tensors and many datums', () => {
    const req: ForwardBackwardRequestData = {
      model_id: 'session:train:0',
      seq_id: 300,
      loss_fn: 'importance_sampling',
      data: Array.from({ length: 3 }, (_, i) => ({
        model_input: { chunks: [{ type: 'encoded_text' as const, tokens: [i, 151645, 2 ** 31 - 1] }] },
        loss_fn_inputs: {
          target_tokens: { dtype: 'int64' as const, data: [3, 4, 2 ** 40] },
          advantages: { dtype: 'float32' as const, data: [0, 0.5, -0.5] },
          weights: { dtype: 'float32' as const, data: [1, 2], shape: [2, 2], sparse_crow_indices: [0, 1, 2], sparse_col_indices: [0, 1] },
        },
      })),
    };
    const back = decodeForwardBackwardRequest(encodeForwardBackwardRequest(req));
    assert.strictEqual(back.seq_id, 300);
    assert.strictEqual(back.loss_fn_config, null);
    assert.strictEqual(back.forward_only, false);
    assert.strictEqual(back.data.length, 3);
    const d = back.data[2]!;
    const c = d.model_input.chunks[0]!;
    assert.ok(c.type === 'encoded_text');
    assert.deepStrictEqual(Array.from(c.tokens), [2, 151645, 2 ** 31 - 1]);
    assert.deepStrictEqual(d.loss_fn_inputs.target_tokens!.data, [3, 4, 2 ** 40]);
    assert.deepStrictEqual(d.loss_fn_inputs.weights!.sparse_crow_indices, [0, 1, 2]);
    assert.deepStrictEqual(d.loss_fn_inputs.weights!.shape, [2, 2]);
  });

  it('rejects malformed input with a message that says what is wrong', () => {
    assert.throws(() => decodeForwardBackwardRequest(bytes('0a05')), /runs past the end/);
    assert.throws(() => decodeForwardBackwardRequest(bytes('2203666f6f')), /loss_fn "foo"/);
  });

  it('keeps a stop reason it does not know (a newer service) instead of failing the response', () => {
    assert.strictEqual(decodeSampleResponse(bytes('0a020805')).sequences[0]!.stop_reason, 'stop_reason_5');
  });
});

describe('protobuf varints: negative, large and boundary values', () => {
  const encode = (v: number) => {
    const w = new ProtoWriter();
    w.varint(v);
    return w.finish();
  };
  const decode = (b: Uint8Array) => new ProtoReader(b).varint();

  it('decodes the wire bytes of negative int32/int64 values exactly (64-bit two\'s complement)', () => {
    assert.strictEqual(decode(bytes('ffffffffffffffffff01')), -1);
    assert.strictEqual(decode(bytes('feffffffffffffffff01')), -2);
    assert.strictEqual(decode(bytes('9cffffffffffffffff01')), -100);
    assert.strictEqual(decode(bytes('80808080f8ffffffff01')), -(2 ** 31));
    assert.strictEqual(decode(bytes('80808080808080808001')), -(2 ** 63));
    assert.strictEqual(decode(bytes('ffffffff07')), 2 ** 31 - 1);
    assert.strictEqual(decode(bytes('ffffffff0f')), 2 ** 32 - 1);
    assert.strictEqual(decode(bytes('8080808010')), 2 ** 32);
    assert.strictEqual(decode(bytes('ffffffffffffff0f')), 2 ** 53 - 1);
  });

  it('round-trips boundary values through the writer and the reader', () => {
    const values = [0, 1, 127, 128, 255, 300, 16383, 16384, 2 ** 28 - 1, 2 ** 28, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 35, 2 ** 49 + 3, 2 ** 53 - 1];
    for (const v of [...values, ...values.filter((x) => x > 0).map((x) => -x), -(2 ** 31)]) {
      assert.strictEqual(decode(encode(v)), v, `value ${v} (bytes ${hex(encode(v))})`);
    }
    assert.strictEqual(hex(encode(-1)), 'ffffffffffffffffff01', 'negatives take 10 bytes, as the SDK writes them');
  });

  it('reads a negative int32 field (seq_id) of a request as the negative number', () => {
    const back = decodeForwardBackwardRequest(encodeForwardBackwardRequest({ ...request1, seq_id: -1 }));
    assert.strictEqual(back.seq_id, -1);
  });

  it('still rejects truncated and over-long varints', () => {
    assert.throws(() => decode(bytes('ff')), /truncated varint/);
    assert.throws(() => decode(bytes('ffffffffffffffffffff01')), /longer than 10 bytes/);
  });
});
