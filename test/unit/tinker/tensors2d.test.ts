// 2-D TensorData as the Python SDK sends it — dense, or CSR when (nrows + 1) + 2·nnz < nrows·ncols —
// built by the client (tensor2d), decoded by the engine (denseTensor), and a top-K cross_entropy
// through the client and the embedded engine over real HTTP, in protobuf and in JSON: the CSR and
// the dense encodings of the same tensors give the same log-probs, losses and weights.
import * as assert from 'assert';
import { ServiceClient, TrainingClient } from '../../../src/core/tinker/client';
import { denseTensor, tensor2d } from '../../../src/core/tinker/tensors';
import { Datum, TensorData, textInput } from '../../../src/core/tinker/types';
import { RANDOM_MODEL, encodeChat } from '../../../src/engine/model/models';
import { useEngineClient } from './engineFixtures';

describe('2-D tensors: dense and CSR', () => {
  it('encodes as CSR exactly when that is smaller, as the SDK does', () => {
    // 3×4 with 2 non-zeros: (3 + 1) + 2·2 = 8 < 12 → CSR
    const sparse = tensor2d([[0, 0, 5, 0], [0, 0, 0, 0], [1.5, 0, 0, 0]], 'float32');
    assert.deepStrictEqual(sparse.sparse_crow_indices, [0, 1, 1, 2]);
    assert.deepStrictEqual(sparse.sparse_col_indices, [2, 0]);
    assert.deepStrictEqual(Array.from(sparse.data), [5, 1.5]);
    assert.deepStrictEqual(sparse.shape, [3, 4]);
    // 2×2 with 2 non-zeros: 3 + 4 = 7 ≥ 4 → dense
    const dense = tensor2d({ data: [1, 0, 0, 2], shape: [2, 2] }, 'int64');
    assert.strictEqual(dense.sparse_crow_indices, undefined);
    assert.deepStrictEqual(Array.from(dense.data), [1, 0, 0, 2]);
    assert.deepStrictEqual(dense.shape, [2, 2]);
    assert.throws(() => tensor2d([[1, 2], [3]], 'float32'), /row 1 has 1 values, row 0 has 2/);
  });

  it('decodes CSR to the dense values, and either encoding round-trips', () => {
    const rows = [[0, 0, 5, 0], [0, 0, 0, 0], [1.5, 0, 0, -2]];
    const want = rows.flat();
    for (const sparse of ['always', 'never', 'auto'] as const) {
      const d = denseTensor(tensor2d(rows, 'float32', { sparse }), 'x');
      assert.deepStrictEqual(Array.from(d.data), want, sparse);
      assert.deepStrictEqual(d.shape, [3, 4]);
    }
    assert.deepStrictEqual(Array.from(denseTensor({ dtype: 'int64', data: [4, 5, 6] }, 'x').data), [4, 5, 6]);
  });

  it('rejects malformed CSR and shapes with errors naming the tensor and the problem', () => {
    const ok = tensor2d([[0, 3], [0, 0], [0, 0]], 'float32', { sparse: 'always' });
    const bad = (t: Partial<TensorData>, re: RegExp) => assert.throws(() => denseTensor({ ...ok, ...t } as TensorData, 'datum 2: loss_fn_inputs.weights'), re);
    bad({ shape: null }, /datum 2: loss_fn_inputs\.weights: a sparse \(CSR\) tensor needs a 2-D shape, got none/);
    bad({ sparse_col_indices: null }, /needs sparse_col_indices/);
    bad({ sparse_crow_indices: [0, 1, 1] }, /has 3 entries; a CSR tensor of 3 rows needs 4/);
    bad({ sparse_crow_indices: [0, 1, 0, 1] }, /decrease at row 1/);
    bad({ sparse_crow_indices: [1, 1, 1, 1] }, /must start at 0 and end at the number of values \(1\)/);
    bad({ sparse_col_indices: [2] }, /sparse column index 2 \(value 0\) is outside 0\.\.1/);
    assert.throws(() => denseTensor({ dtype: 'float32', data: [1, 2, 3], shape: [2, 2] }, 'w'), /w: 3 values do not fill the shape \[2, 2\]/);
  });
});

describe('top-K cross_entropy through the client and the embedded engine over HTTP', function () {
  this.timeout(120_000);
  const engine = useEngineClient('tinker-engine-topk-');
  const K = 4;
  const toks = encodeChat('<|im_start|>user\nWhat is 12 + 30?<|im_end|>\n<|im_start|>assistant\n42<|im_end|>');
  const n = toks.length - 1;
  // per position: the true next token with weight 0.7 and three others; most weights are zero except
  // on the answer's positions, so the weights go as CSR and the targets dense
  const targets = Array.from({ length: n }, (_, t) => [toks[t + 1]!, (toks[t + 1]! + 1) % 256, (toks[t + 1]! + 2) % 256, (toks[t + 1]! + 3) % 256]);
  const weights = Array.from({ length: n }, (_, t) => (t >= n - 4 ? [0.7, 0.2, 0.1, 0] : [0, 0, 0, 0]));
  const datum = (sparse: 'auto' | 'never'): Datum => ({
    model_input: textInput(toks.slice(0, -1)),
    loss_fn_inputs: { target_tokens: tensor2d(targets, 'int64', { sparse }), weights: tensor2d(weights, 'float32', { sparse }) },
  });

  async function run(client: ServiceClient, sparse: 'auto' | 'never') {
    const tc: TrainingClient = await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 7 });
    const outs = [];
    for (let step = 0; step < 2; step++) {
      const fb = await (await tc.forwardBackward([datum(sparse)], 'cross_entropy')).result();
      await (await tc.optimStep({ learning_rate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8 })).result();
      outs.push({ loss: fb.metrics['loss:sum'], lp: Array.from(fb.loss_fn_outputs[0]!.logprobs!.data), shape: fb.loss_fn_outputs[0]!.logprobs!.shape });
    }
    await tc.unload();
    return outs;
  }

  it('sends the weights as CSR (smaller) and the targets dense', () => {
    assert.ok(datum('auto').loss_fn_inputs.weights!.sparse_crow_indices, 'weights in CSR');
    assert.strictEqual(datum('auto').loss_fn_inputs.target_tokens!.sparse_crow_indices, undefined, 'targets dense');
  });

  for (const format of ['protobuf', 'json'] as const) {
    it(`${format}: CSR and dense inputs give the same log-probs (N, K), losses and next steps`, async () => {
      const client = await ServiceClient.connect({ baseUrl: engine.url, clientVersion: 'test', heartbeatIntervalMs: 200, forwardBackwardFormat: format });
      try {
        const viaCsr = await run(client, 'auto');
        const viaDense = await run(client, 'never');
        assert.deepStrictEqual(viaCsr, viaDense);
        assert.deepStrictEqual(viaCsr[0]!.shape, [n, K]);
        assert.strictEqual(viaCsr[0]!.lp.length, n * K);
        // the loss is −Σ w·ℓ over the weighted entries
        let expected = 0;
        weights.flat().forEach((w, e) => (expected -= w * viaCsr[0]!.lp[e]!));
        assert.ok(Math.abs(viaCsr[0]!.loss! - expected) < 1e-3 * Math.max(1, Math.abs(expected)), `${viaCsr[0]!.loss} vs ${expected}`);
        // the step moved the model: the second forward differs
        assert.notDeepStrictEqual(viaCsr[1]!.lp, viaCsr[0]!.lp);
      } finally {
        client.close();
      }
    });
  }

  it('a malformed CSR tensor fails the request with a message naming the datum and the field', async () => {
    const tc = await engine.client.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 7 });
    const d = datum('auto');
    const w = d.loss_fn_inputs.weights!;
    const broken: Datum = { ...d, loss_fn_inputs: { ...d.loss_fn_inputs, weights: { ...w, sparse_col_indices: w.sparse_col_indices!.map(() => 9) } } };
    await assert.rejects(async () => (await tc.forwardBackward([broken], 'cross_entropy')).result(), /datum 0: loss_fn_inputs\.weights: sparse column index 9 \(value 0\) is outside 0\.\.3/);
    await tc.unload();
  });
});
