// forward_backward computes a token prefix shared by several datums once: every output, the loss, the
// gradients and the updated weights must equal the computation without sharing.
// - The model itself, in float64: shared and unshared log-probs and every parameter's gradient agree
//   to 1e-10 relative, so the mathematics of sharing is exact (a missed continuation, a wrong position
//   or a prefix row attended twice changes gradients by whole percents).
// - The engine, in float32 on the WASM SIMD kernel as it serves: both paths differ only in the order
//   of sums (a shared prefix's gradient is accumulated over its continuations before the backward
//   instead of after), and the kernel accumulates in float32. Outputs, losses and gradient norms
//   agree to 1e-5 relative. Adam's moments are compared at 5e-4 and the weight updates at 1e-2: the
//   A adapters' gradients are sums that nearly cancel (B is small), and Adam divides each element by
//   its own magnitude, so a few roundings become a larger relative change. Measured, worst tensor per
//   loss: moments 1.7e-6 (ppo) to 5.5e-5 (dro), updates 6e-6 (ppo) to 1.5e-3 (dro, whose gradient
//   also flows through every prompt position). A slip in the plumbing (a continuation left out, a
//   gradient sent to the wrong row) changes gradients by whole percents (1/8 for a missed datum).
import * as assert from 'assert';
import * as path from 'path';
import type { EngineDatum, LossFn } from '../../../src/engine/contract';
import { LocalBackend, WEIGHTS_MAGIC, groupByPrefix } from '../../../src/engine/model/backend';
import { Gpt } from '../../../src/engine/model/gpt';
import { GptConfig, LoraSpec, Params, Rng, initBase, initLora } from '../../../src/engine/model/gptWeights';
import { RANDOM_MODEL, SMALL_GPT, encodeChat } from '../../../src/engine/model/models';
import { readTensorFile } from '../../../src/engine/model/tensorFile';
import { initCompute } from '../../../src/engine/compute';

const noWeights = path.join(__dirname, 'no-weights');
const lora = { rank: 4, seed: 3, trainAttn: true, trainMlp: true, trainUnembed: true };
// eps 1e-3 keeps Adam's first step Lipschitz in the gradient, so weights are comparable where it is tiny
const adam = { learningRate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-3, weightDecay: 0.01, gradClipNorm: 0 };

/** one datum: prompt + completion as model input, per-position sampler log-probs, advantage or weight */
function makeDatum(prompt: string, completion: string, value: number, lossFn: LossFn): EngineDatum {
  const p = encodeChat(`<|im_start|>user\n${prompt}<|im_end|>\n<|im_start|>assistant\n`);
  const full = [...p, ...encodeChat(`${completion}<|im_end|>`)];
  const n = full.length - 1;
  const mask = (t: number) => (t >= p.length - 1 ? 1 : 0);
  const perPos = (f: (t: number) => number) => ({ dtype: 'float32' as const, data: Float32Array.from({ length: n }, (_, t) => f(t)), shape: [n] });
  const target_tokens = { dtype: 'int64' as const, data: Float64Array.from(full.slice(1)), shape: [n] };
  const lossFnInputs: EngineDatum['lossFnInputs'] =
    lossFn === 'cross_entropy'
      ? { target_tokens, weights: perPos((t) => mask(t) * value) }
      : { target_tokens, logprobs: perPos((t) => -1 - 0.1 * (t % 5)), advantages: perPos((t) => mask(t) * value) };
  return { tokens: Int32Array.from(full.slice(0, -1)), lossFnInputs };
}

/** GRPO-like groups of different prompt lengths, duplicate and nested completions, zero values, a singleton */
function mixedBatch(lossFn: LossFn): EngineDatum[] {
  const g = (prompt: string, comps: string[], values: number[]) => comps.map((c, i) => makeDatum(prompt, c, values[i]!, lossFn));
  return [
    ...g('What is 12 + 30?', ['42', '42', '4', '412', '7', '42'], [0.5, 0.5, -0.25, -0.25, -1, 0.5]),
    makeDatum('hi', 'hello', 1, lossFn),
    ...g('Add 7 and 8', ['15', '16', '1'], [0, 0, 0]),
    ...g('What is 123 + 456?', ['579', '57', '600'], [1, 0, -1]),
    ...g('What is 12 + 3?', ['15', '1'], [0.3, -0.3]),
  ];
}

const CONFIGS: Record<LossFn, Record<string, number>> = {
  cross_entropy: {},
  importance_sampling: {},
  ppo: { clip_low_threshold: 0.9, clip_high_threshold: 1.1 },
  cispo: { clip_low_threshold: 0.9, clip_high_threshold: 1.1 },
  dro: { beta: 0.5 },
};

function relDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.length; i++) {
    num += (a[i]! - b[i]!) ** 2;
    den += b[i]! ** 2;
  }
  return Math.sqrt(num) / Math.max(Math.sqrt(den), 1e-30);
}

function tensors(state: Uint8Array): Map<string, Float32Array | Float64Array> {
  return readTensorFile(state, 'TSSTATE1', 'state').tensors;
}

describe('the model with shared prefixes (float64)', () => {
  const cfg: GptConfig = { vocabSize: 13, ctx: 12, d: 8, nLayer: 2, nHead: 2, ffn: 12 };
  const spec: LoraSpec = { rank: 2, alpha: 4, attn: true, mlp: true, unembed: true };
  const f64 = (n: number) => new Float64Array(n);
  const rng = new Rng(11);
  const base = initBase(cfg, 3, f64);
  // weights larger than GPT-2's init, so every path carries a visible gradient
  for (const [k, v] of base) for (let i = 0; i < v.length; i++) v[i] = (k.endsWith('.g') ? 1 : 0) + rng.normal() * (k.endsWith('.g') || k.endsWith('.b') ? 0.1 : 0.3);
  const lora = initLora(cfg, spec, 5, f64);
  for (const [k, v] of lora) if (k.endsWith('.B')) for (let i = 0; i < v.length; i++) v[i] = rng.normal() * 0.3;
  const gpt = new Gpt(cfg, base, lora, spec, f64);
  // two prompts with three and two continuations (of different lengths), and a sequence of its own
  const prompts = [[1, 4, 2, 9, 3], [7, 7, 5]];
  const seqs = [[...prompts[0]!, 10, 0], [...prompts[0]!, 6], [...prompts[0]!, 10, 8, 12], [...prompts[1]!, 2, 2], [...prompts[1]!, 11], [3, 1, 4, 1, 5]];
  const targetsOf = seqs.map((sq) => sq.map((_, t) => (sq[t + 1] ?? (t * 5 + 3)) % cfg.vocabSize));
  const coefOf = seqs.map((sq) => sq.map(() => rng.normal()));
  const zeroGrads = (): Params => new Map([...base, ...lora].map(([k, v]) => [k, new Float64Array(v.length)]));

  function unshared() {
    const f = gpt.forward(Int32Array.from(seqs.flat()), seqs.map((sq) => sq.length));
    const grads = zeroGrads();
    gpt.backward(f, Int32Array.from(targetsOf.flat()), Float64Array.from(coefOf.flat()), grads);
    const lp = seqs.flatMap((sq, k) => sq.map((_, t) => f.logprobs[(seqs.slice(0, k).flat().length + t) * cfg.vocabSize + targetsOf[k]![t]!]!));
    return { lp, grads };
  }

  function shared() {
    // roots: prompt 0, prompt 1, then continuations pointing at them; the last sequence stands alone
    const owner = [0, 0, 0, 1, 1, -1];
    const tokens: number[] = [...prompts[0]!, ...prompts[1]!];
    const lens = [prompts[0]!.length, prompts[1]!.length];
    const parents = [-1, -1];
    const rootStart = [0, prompts[0]!.length];
    const rows: number[][] = [];
    seqs.forEach((sq, k) => {
      const o = owner[k]!;
      const pre = o === -1 ? 0 : prompts[o]!.length;
      const start = tokens.length;
      tokens.push(...sq.slice(pre));
      lens.push(sq.length - pre);
      parents.push(o);
      rows.push(sq.map((_, t) => (t < pre ? rootStart[o]! + t : start + t - pre)));
    });
    const f = gpt.forward(Int32Array.from(tokens), lens, parents);
    const grads = zeroGrads();
    gpt.backward(f, Int32Array.from(targetsOf.flat()), Float64Array.from(coefOf.flat()), grads, Int32Array.from(rows.flat()));
    const lp = seqs.flatMap((sq, k) => sq.map((_, t) => f.logprobs[rows[k]![t]! * cfg.vocabSize + targetsOf[k]![t]!]!));
    return { lp, grads };
  }

  it('gives the same log-probs and the same gradient for every parameter tensor', () => {
    const a = shared();
    const b = unshared();
    assert.strictEqual(a.lp.length, b.lp.length);
    a.lp.forEach((x, i) => assert.ok(Math.abs(x - b.lp[i]!) <= 1e-10 * Math.max(1, Math.abs(b.lp[i]!)), `log-prob ${i}: ${x} vs ${b.lp[i]}`));
    for (const [name, y] of b.grads) {
      assert.ok(y.some((v) => v !== 0), `${name} has a gradient`);
      assert.ok(relDiff(a.grads.get(name)!, y) <= 1e-10, `${name}: differs by ${relDiff(a.grads.get(name)!, y)} (relative)`);
    }
  });

  it('refuses a parent that is not an earlier root sequence', () => {
    assert.throws(() => gpt.forward(Int32Array.from([1, 2, 3, 4]), [2, 1, 1], [-1, 0, 1]), /parent 1 is not an earlier root/);
  });
});

describe('forward_backward with shared prefixes', function () {
  this.timeout(120_000);
  // the WASM SIMD kernel, as the engine serves, whether or not a test before this one started it
  before(() => initCompute({ threads: 1, log: () => undefined }));
  const shared = new LocalBackend({ weightsDir: noWeights });
  const unshared = new LocalBackend({ weightsDir: noWeights, sharePrefixes: false });

  it('groups the datums of a GRPO group under their prompt, each keeping a token of its own', () => {
    const data = mixedBatch('importance_sampling');
    const units = groupByPrefix(data.map((_, k) => k), data);
    const promptOf = (k: number) => data[k]!.tokens.length;
    // the four prompts with several completions each form one unit; the singleton stands alone
    const big = units.filter((u) => u.members.length > 1);
    assert.strictEqual(big.length, 4, JSON.stringify(units));
    for (const u of units) for (const k of u.members) assert.ok(u.prefix < promptOf(k), `datum ${k} keeps a token of its own`);
    const first = big.find((u) => u.members.includes(0))!;
    assert.deepStrictEqual([...first.members].sort((a, b) => a - b), [0, 1, 2, 3, 4, 5]);
    // the prompt and the completions' common start: '<|im_start|>user\nWhat is 12 + 30?<|im_end|>\n<|im_start|>assistant\n'
    const promptLen = encodeChat('<|im_start|>user\nWhat is 12 + 30?<|im_end|>\n<|im_start|>assistant\n').length;
    assert.strictEqual(first.prefix, promptLen);
    assert.deepStrictEqual(units.flatMap((u) => u.members).sort((a, b) => a - b), data.map((_, k) => k));
  });

  for (const lossFn of Object.keys(CONFIGS) as LossFn[]) {
    it(`${lossFn}: outputs, loss, gradients and updated weights equal the unshared computation (LoRA)`, async () => {
      const data = mixedBatch(lossFn);
      const id = `m-${lossFn}`;
      await shared.createTrainingModel(id, RANDOM_MODEL, lora);
      await unshared.createTrainingModel(id, RANDOM_MODEL, lora);
      // two steps, so the second forward runs on adapters that are no longer zero
      for (let step = 0; step < 2; step++) {
        const a = await shared.forwardBackward(id, data, lossFn, CONFIGS[lossFn], false);
        const b = await unshared.forwardBackward(id, data, lossFn, CONFIGS[lossFn], false);
        const la = a.metrics['loss:sum']!;
        const lb = b.metrics['loss:sum']!;
        assert.ok(Math.abs(la - lb) <= 1e-5 * Math.max(1, Math.abs(lb)), `step ${step} loss ${la} vs ${lb}`);
        data.forEach((_, k) => {
          for (const key of ['logprobs', 'elementwise_loss'] as const) {
            const x = a.outputs[k]![key]!.data;
            const y = b.outputs[k]![key]!.data;
            assert.strictEqual(x.length, y.length);
            for (let t = 0; t < x.length; t++) assert.ok(Math.abs(x[t]! - y[t]!) <= 1e-5 * Math.max(1, Math.abs(y[t]!)), `step ${step} datum ${k} ${key}[${t}]: ${x[t]} vs ${y[t]}`);
          }
        });
        const na = (await shared.optimStep(id, adam))['grad_norm:last']!;
        const nb = (await unshared.optimStep(id, adam))['grad_norm:last']!;
        assert.ok(nb > 0 && Math.abs(na - nb) <= 1e-5 * nb, `step ${step} grad norm ${na} vs ${nb}`);
      }
      // Adam's moments carry the gradients; the weights carry the updates
      const ta = tensors(await shared.exportState(id, true));
      const tb = tensors(await unshared.exportState(id, true));
      const init = tensors(await (async () => {
        await unshared.createTrainingModel(`${id}-0`, RANDOM_MODEL, lora);
        return unshared.exportState(`${id}-0`, false);
      })());
      for (const [name, y] of tb) {
        const x = ta.get(name)!;
        if (name.startsWith('w:')) {
          const w0 = init.get(name)!;
          const moved = y.map((v, i) => v - w0[i]!);
          const diff = x.map((v, i) => v - w0[i]!);
          // see the header: Adam's per-element division amplifies the roundings of nearly cancelling sums
          assert.ok(relDiff(diff, moved) <= 1e-2, `${name}: update differs by ${relDiff(diff, moved)} (relative)`);
        } else if (y.some((v) => v !== 0)) {
          assert.ok(relDiff(x, y) <= 5e-4, `${name}: differs by ${relDiff(x, y)} (relative)`);
        }
      }
    });
  }

  it('full training (every base weight, positions and embedding included) equals the unshared computation', async () => {
    const data = mixedBatch('cross_entropy');
    shared.createFullTrainingModel('full', RANDOM_MODEL);
    unshared.createFullTrainingModel('full', RANDOM_MODEL);
    const a = await shared.forwardBackward('full', data, 'cross_entropy', {}, false);
    const b = await unshared.forwardBackward('full', data, 'cross_entropy', {}, false);
    assert.ok(Math.abs(a.metrics['loss:sum']! - b.metrics['loss:sum']!) <= 1e-5 * Math.abs(b.metrics['loss:sum']!));
    await shared.optimStep('full', adam);
    await unshared.optimStep('full', adam);
    const w0 = initBase(SMALL_GPT, 0, (n) => new Float32Array(n));
    const wa = readTensorFile(shared.exportBaseWeights('full', {}), WEIGHTS_MAGIC, 'weights').tensors;
    const wb = readTensorFile(unshared.exportBaseWeights('full', {}), WEIGHTS_MAGIC, 'weights').tensors;
    for (const [name, y] of wb) {
      const x = wa.get(name)!;
      const base = w0.get(name)!;
      const moved = y.map((v, i) => v - base[i]!);
      assert.ok(moved.some((v) => v !== 0), `${name} moved`);
      const r = relDiff(x.map((v, i) => v - base[i]!), moved);
      assert.ok(r <= 1e-5, `${name}: update differs by ${r} (relative)`);
    }
  });
});
