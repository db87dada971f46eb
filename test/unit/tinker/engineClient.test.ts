// The Tinker client against the embedded engine over real HTTP on 127.0.0.1: every call the client
// makes, driven only through the client. The engine runs in this process with the real compute
// backend and the randomly initialised model (small and fast).
import * as assert from 'assert';
import { ServiceClient, TrainingClient, splitTinkerPath } from '../../../src/core/tinker/client';
import { ConflictError, NotFoundError, RequestFailedError } from '../../../src/core/tinker/errors';
import { Datum, textInput } from '../../../src/core/tinker/types';
import { RANDOM_MODEL, encodeChat } from '../../../src/engine/model/models';
import { sftDatum, useEngineClient } from './engineFixtures';

const IM_END = 258;

describe('Tinker client ⇄ embedded engine over HTTP', function () {
  this.timeout(120_000);
  const engine = useEngineClient('tinker-engine-client-');
  let client: ServiceClient;
  let tc: TrainingClient;
  const datum = sftDatum('<|im_start|>user\nWhat is 2 + 3?<|im_end|>\n<|im_start|>assistant\n5<|im_end|>');

  before(() => {
    client = engine.client;
  });

  it('handshakes, opens a session and lists the server models', async () => {
    assert.ok(client.sessionId, 'a session id');
    assert.strictEqual(client.config.pjwt_auth_enabled, false);
    const caps = await client.capabilities();
    assert.ok(caps.supported_models.some((m) => m.model_name === RANDOM_MODEL));
    assert.deepStrictEqual(await client.healthz(), { status: 'ok' });
  });

  it('creates a LoRA training client and reads its info', async () => {
    tc = await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 1 });
    assert.match(tc.modelId, /:train:0$/);
    const info = await tc.getInfo();
    assert.strictEqual(info.model_id, tc.modelId);
    assert.strictEqual(info.lora_rank, 4);
    assert.strictEqual(info.model_data?.model_name, RANDOM_MODEL);
  });

  it('forward_backward + optim_step submitted back to back lower the loss', async () => {
    const losses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const fb = await tc.forwardBackward([datum, datum], 'cross_entropy');
      const opt = await tc.optimStep({ learning_rate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8 });
      const out = await fb.result();
      await opt.result();
      assert.strictEqual(out.loss_fn_outputs.length, 2);
      assert.strictEqual(out.loss_fn_outputs[0]!.logprobs!.data.length, datum.model_input.chunks[0]!.type === 'encoded_text' ? datum.model_input.chunks[0]!.tokens.length : -1);
      losses.push(out.metrics['loss:sum']!);
    }
    assert.ok(losses[3]! < losses[0]! * 0.9, `loss went down: ${losses.map((l) => l.toFixed(2)).join(' → ')}`);
  });

  it('forward computes the same log-probs as forward_backward, without changing the weights', async () => {
    // weights 0: forward_backward returns log-probs but leaves no gradient for later steps
    const n = datum.loss_fn_inputs.target_tokens!.data.length;
    const zeroWeights: Datum = { model_input: datum.model_input, loss_fn_inputs: { ...datum.loss_fn_inputs, weights: { dtype: 'float32', data: new Array(n).fill(0) } } };
    const a = await (await tc.forward([datum], 'cross_entropy')).result();
    const fb = await (await tc.forwardBackward([zeroWeights], 'cross_entropy')).result();
    const b = await (await tc.forward([datum], 'cross_entropy')).result();
    assert.deepStrictEqual(Array.from(fb.loss_fn_outputs[0]!.logprobs!.data), Array.from(a.loss_fn_outputs[0]!.logprobs!.data), 'forward and forward_backward agree');
    assert.deepStrictEqual(Array.from(b.loss_fn_outputs[0]!.logprobs!.data), Array.from(a.loss_fn_outputs[0]!.logprobs!.data), 'the weights did not change');
    assert.strictEqual(fb.metrics['loss:sum'], 0);
    const ce = -Array.from(a.loss_fn_outputs[0]!.logprobs!.data).reduce((x, lp) => x + lp, 0);
    assert.ok(Math.abs(a.metrics['loss:sum']! - ce) < 1e-4 * ce, `cross_entropy loss:sum ${a.metrics['loss:sum']} = −Σ logp ${ce}`);
  });

  it('importance_sampling and ppo take sampler log-probs and advantages', async () => {
    const n = datum.loss_fn_inputs.target_tokens!.data.length;
    const learner = Array.from((await (await tc.forward([datum], 'cross_entropy')).result()).loss_fn_outputs[0]!.logprobs!.data);
    // sampler log-probs that put the ratio above, inside and below the 0.8..1.2 band, advantages of both signs
    const shifts = [0.5, 0.05, -0.5];
    const samp = learner.map((lp, i) => lp - shifts[i % 3]!);
    const adv = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 0.5 : -0.5));
    const rl: Datum = {
      model_input: datum.model_input,
      loss_fn_inputs: {
        target_tokens: datum.loss_fn_inputs.target_tokens!,
        logprobs: { dtype: 'float32', data: samp },
        advantages: { dtype: 'float32', data: adv },
      },
    };
    const is = await (await tc.forward([rl], 'importance_sampling')).result();
    const ppo = await (await tc.forward([rl], 'ppo', { clip_low_threshold: 0.8, clip_high_threshold: 1.2 })).result();
    const ratios = Array.from(is.loss_fn_outputs[0]!.logprobs!.data, (lp, i) => Math.exp(lp - Math.fround(samp[i]!)));
    const isLoss = -ratios.reduce((x, r, i) => x + r * adv[i]!, 0);
    const ppoLoss = -ratios.reduce((x, r, i) => x + Math.min(r * adv[i]!, Math.min(Math.max(r, 0.8), 1.2) * adv[i]!), 0);
    assert.ok(Math.abs(is.metrics['loss:sum']! - isLoss) < 1e-4 * Math.max(1, Math.abs(isLoss)), `importance_sampling ${is.metrics['loss:sum']} vs ${isLoss}`);
    assert.ok(Math.abs(ppo.metrics['loss:sum']! - ppoLoss) < 1e-4 * Math.max(1, Math.abs(ppoLoss)), `ppo ${ppo.metrics['loss:sum']} vs ${ppoLoss}`);
    assert.ok(Math.abs(ppoLoss - isLoss) > 0.1, 'the clip changes the loss here');
    await assert.rejects((await tc.forward([rl], 'cross_entropy')).result(), (e: unknown) => e instanceof RequestFailedError && /weights is required/.test(e.message) && e.category === 'user');
  });

  it('JSON forward_backward bodies give the same result as protobuf', async () => {
    const jsonClient = await ServiceClient.connect({ baseUrl: engine.url, forwardBackwardFormat: 'json' });
    try {
      const state = await (await tc.saveState('for-json')).result();
      const tj = await jsonClient.createTrainingClientFromState(state.path);
      const viaJson = await (await tj.forward([datum], 'cross_entropy')).result();
      const viaProto = await (await tc.forward([datum], 'cross_entropy')).result();
      assert.deepStrictEqual(Array.from(viaJson.loss_fn_outputs[0]!.logprobs!.data), Array.from(viaProto.loss_fn_outputs[0]!.logprobs!.data));
    } finally {
      jsonClient.close();
    }
  });

  it('saves state and sampler weights, and loads state with and without the optimizer', async () => {
    const state = await (await tc.saveState('000004', { ttlSeconds: 3600 })).result();
    assert.strictEqual(state.path, `tinker://${tc.modelId}/weights/000004`);
    const sampler = await (await tc.saveWeightsForSampler('000004')).result();
    assert.strictEqual(sampler.path, `tinker://${tc.modelId}/sampler_weights/000004`);
    await assert.rejects((await tc.saveState('000004')).result(), (e: unknown) => e instanceof RequestFailedError && /already exists/.test(e.message));
    const withOpt = await client.createTrainingClientFromState(state.path, { withOptimizer: true });
    const withoutOpt = await client.createTrainingClientFromState(state.path);
    const a = await (await withOpt.forward([datum], 'cross_entropy')).result();
    const b = await (await withoutOpt.forward([datum], 'cross_entropy')).result();
    const c = await (await tc.forward([datum], 'cross_entropy')).result();
    assert.deepStrictEqual(Array.from(a.loss_fn_outputs[0]!.logprobs!.data), Array.from(c.loss_fn_outputs[0]!.logprobs!.data));
    assert.deepStrictEqual(Array.from(b.loss_fn_outputs[0]!.logprobs!.data), Array.from(c.loss_fn_outputs[0]!.logprobs!.data));
    // with the optimizer state, the next step is the same as the original's; without it, it differs
    const stepOf = async (t: TrainingClient) => {
      await (await t.forwardBackward([datum], 'cross_entropy')).result();
      await (await t.optimStep({ learning_rate: 1e-2 })).result();
      return Array.from((await (await t.forward([datum], 'cross_entropy')).result()).loss_fn_outputs[0]!.logprobs!.data);
    };
    const orig = await stepOf(tc);
    assert.deepStrictEqual(await stepOf(withOpt), orig);
    assert.notDeepStrictEqual(await stepOf(withoutOpt), orig);
  });

  it('samples with every parameter: seed, temperature, top_k, top_p, stop tokens and strings, logprobs', async () => {
    const sc = await tc.saveWeightsAndGetSamplingClient();
    const prompt = textInput(encodeChat('<|im_start|>user\nWhat is 2 + 3?<|im_end|>\n<|im_start|>assistant\n'));
    const params = { max_tokens: 6, temperature: 1, top_k: 20, top_p: 0.95, seed: 7, stop: [IM_END] };
    const a = await sc.sample(prompt, params, { numSamples: 3, promptLogprobs: true, topkPromptLogprobs: 2 });
    const b = await sc.sample(prompt, params, { numSamples: 3 });
    assert.strictEqual(a.sequences.length, 3);
    assert.deepStrictEqual(a.sequences.map((s) => s.tokens), b.sequences.map((s) => s.tokens), 'same seed, same samples');
    for (const s of a.sequences) {
      assert.ok(s.tokens.length >= 1 && s.tokens.length <= 6);
      assert.strictEqual(s.logprobs!.length, s.tokens.length);
      assert.ok(s.stop_reason === 'length' || s.tokens[s.tokens.length - 1] === IM_END, 'a stopped sequence ends with its stop token');
    }
    assert.strictEqual(a.prompt_logprobs!.length, prompt.chunks[0]!.type === 'encoded_text' ? prompt.chunks[0]!.tokens.length : -1);
    assert.strictEqual(a.prompt_logprobs![0], null);
    assert.strictEqual(a.topk_prompt_logprobs![0], null);
    assert.strictEqual(a.topk_prompt_logprobs![1]!.length, 2);
    const greedy = await sc.sample(prompt, { max_tokens: 3, temperature: 0, stop: ['\n'] }, {});
    const greedy2 = await sc.sample(prompt, { max_tokens: 3, temperature: 0, stop: ['\n'] }, {});
    assert.deepStrictEqual(greedy.sequences[0]!.tokens, greedy2.sequences[0]!.tokens);
    const lps = await sc.computeLogprobs(prompt);
    assert.deepStrictEqual(lps, a.prompt_logprobs);
  });

  it('samples from a named sampler checkpoint and from the base model', async () => {
    const named = await client.createSamplingClient({ modelPath: `tinker://${tc.modelId}/sampler_weights/000004` });
    const base = await client.createSamplingClient({ baseModel: RANDOM_MODEL });
    const prompt = textInput(encodeChat('<|im_start|>user\nhi<|im_end|>\n'));
    for (const sc of [named, base]) {
      const r = await sc.sample(prompt, { max_tokens: 2, seed: 1 }, {});
      assert.strictEqual(r.sequences.length, 1);
    }
    const info = await client.samplerInfo(base.samplerId);
    assert.strictEqual(info.base_model, RANDOM_MODEL);
  });

  it('lists training runs and checkpoints with pagination, reads weights info, sets TTL, publishes, downloads and deletes', async () => {
    const runs = await client.listTrainingRuns({ limit: 1, offset: 0 });
    assert.strictEqual(runs.training_runs.length, 1);
    assert.ok(runs.cursor!.total_count >= 3);
    const all = await client.allTrainingRuns();
    assert.strictEqual(all.length, runs.cursor!.total_count);
    const run = await client.getTrainingRun(tc.modelId);
    assert.strictEqual(run.last_checkpoint?.checkpoint_id, 'weights/000004');
    const ckpts = await client.listCheckpoints(tc.modelId);
    const names = ckpts.checkpoints.map((c) => c.checkpoint_id).sort();
    assert.deepStrictEqual(names, ['sampler_weights/000004', 'weights/000004', 'weights/for-json']);
    const user = await client.listUserCheckpoints({ limit: 2 });
    assert.strictEqual(user.checkpoints.length, 2);
    const path4 = `tinker://${tc.modelId}/weights/000004`;
    const wi = await client.weightsInfo(path4);
    assert.deepStrictEqual([wi.base_model, wi.is_lora, wi.lora_rank], [RANDOM_MODEL, true, 4]);
    await client.setCheckpointTtl(path4, null);
    assert.strictEqual((await client.listCheckpoints(tc.modelId)).checkpoints.find((c) => c.checkpoint_id === 'weights/000004')!.expires_at, null);
    await client.publishCheckpoint(path4);
    await assert.rejects(client.publishCheckpoint(path4), ConflictError);
    assert.strictEqual((await client.listCheckpoints(tc.modelId)).checkpoints.find((c) => c.checkpoint_id === 'weights/000004')!.public, true);
    await client.unpublishCheckpoint(path4);
    const archive = await client.checkpointArchiveUrl(path4);
    assert.ok(archive.expires.getTime() > Date.now());
    const tar = Buffer.from(await (await fetch(archive.url)).arrayBuffer());
    assert.ok(tar.includes(Buffer.from('adapter_config.json')) && tar.includes(Buffer.from('checkpoint_complete')));
    await client.deleteCheckpoint(`tinker://${tc.modelId}/weights/for-json`);
    await assert.rejects(client.weightsInfo(`tinker://${tc.modelId}/weights/for-json`), NotFoundError);
    assert.deepStrictEqual(splitTinkerPath(path4).checkpointId, 'weights/000004');
  });

  it('expires a checkpoint when its TTL passes', async () => {
    const r = await (await tc.saveWeightsForSampler('short-lived', { ttlSeconds: 1 })).result();
    const deadline = Date.now() + 15_000;
    for (;;) {
      const ids = (await client.listCheckpoints(tc.modelId)).checkpoints.map((c) => c.tinker_path);
      if (!ids.includes(r.path!)) break;
      assert.ok(Date.now() < deadline, 'the checkpoint expired within 15 s');
      await new Promise((res) => setTimeout(res, 200));
    }
  });

  it('unloads a model; later requests for it fail with a clear error', async () => {
    const t = await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 2 });
    await t.unload();
    await assert.rejects(t.getInfo(), (e: unknown) => e instanceof NotFoundError && /not loaded/.test(e.message));
  });

  it('never puts the API key in an error message', async () => {
    const keyed = await ServiceClient.connect({ baseUrl: engine.url, apiKey: 'tml-secret-key-0123456789' });
    try {
      await assert.rejects(keyed.createLoraTrainingClient('no/such-model'), (e: unknown) => {
        const msg = String((e as Error).message);
        return /not served here/.test(msg) && !msg.includes('tml-secret-key-0123456789');
      });
    } finally {
      keyed.close();
    }
  });
});
