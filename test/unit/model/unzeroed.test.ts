// The training arena hands out arrays without zeroing them where the next operation writes them
// whole (gpt.ts `fresh`: GEMM outputs, layer norms, elementwise results, copies). Were one of them
// read before it is written, the memory's stale contents would leak into the results. Here the kernel
// fills every such array with NaN: each result must stay finite and bit-identical to a default run,
// for LoRA with shared prompt prefixes (arith-gpt's short attention) and for full training on long
// sequences (arith-chat's rotary model, whose attention over more than 64 positions runs as GEMMs).
import * as assert from 'assert';
import * as path from 'path';
import type { EngineDatum } from '../../../src/engine/contract';
import { allocF32, computeInfo, freeF32, initCompute, setUnzeroedFill } from '../../../src/engine/compute';
import { LocalBackend } from '../../../src/engine/model/backend';
import { GptConfig, initBase } from '../../../src/engine/model/gptWeights';
import { CHAT_GPT, RANDOM_MODEL, SMALL_GPT, encodeChat } from '../../../src/engine/model/models';

const noWeights = path.join(__dirname, 'no-weights');
const adam = { learningRate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 };

/** GRPO-like groups: a prompt and completions of 1 to 5 tokens, advantages ±1 on the completion. */
function groups(): EngineDatum[] {
  const out: EngineDatum[] = [];
  for (let g = 0; g < 4; g++) {
    const prompt = encodeChat(`<|im_start|>user\nWhat is ${g * 17} + ${g * 5 + 3}?<|im_end|>\n<|im_start|>assistant\n`);
    for (let j = 0; j < 4; j++) {
      const all = [...prompt, ...Array.from({ length: 1 + ((g + j) % 5) }, (_, t) => 48 + ((g + j + t) % 10))];
      const n = all.length - 1;
      out.push({
        tokens: Int32Array.from(all.slice(0, -1)),
        lossFnInputs: {
          target_tokens: { dtype: 'int64', data: Float64Array.from(all.slice(1)), shape: [n] },
          logprobs: { dtype: 'float32', data: new Float32Array(n).fill(-2), shape: [n] },
          advantages: { dtype: 'float32', data: Float32Array.from({ length: n }, (_, t) => (t >= prompt.length - 1 ? (j % 2 ? 1 : -1) : 0)), shape: [n] },
        },
      });
    }
  }
  return out;
}

/** two sequences of `len` tokens of addition chats, every target weighted */
function long(len: number): EngineDatum[] {
  return [0, 1].map((i) => {
    let toks: number[] = [];
    for (let j = 0; toks.length < len + 1; j++) toks = toks.concat(encodeChat(`<|im_start|>user\nWhat is ${i * 31 + j} + ${j * 7}?<|im_end|>\n<|im_start|>assistant\n${i * 31 + j * 8}<|im_end|>\n`));
    toks = toks.slice(0, len + 1);
    return {
      tokens: Int32Array.from(toks.slice(0, -1)),
      lossFnInputs: {
        target_tokens: { dtype: 'int64', data: Float64Array.from(toks.slice(1)), shape: [len] },
        weights: { dtype: 'float32', data: new Float32Array(len).fill(1), shape: [len] },
      },
    };
  });
}

interface Outcome {
  logprobs: number[][];
  losses: number[];
  gradNorms: number[];
  weights: number[];
}

/** Two forward_backward + optim_step rounds (the second on updated weights); what came out. */
async function train(config: GptConfig, mode: 'lora' | 'full', data: EngineDatum[], fill: number | undefined): Promise<Outcome> {
  setUnzeroedFill(fill);
  const backend = new LocalBackend({ weightsDir: noWeights, config });
  try {
    if (mode === 'lora') await backend.createTrainingModel('m', RANDOM_MODEL, { rank: 4, seed: 3, trainAttn: true, trainMlp: true, trainUnembed: true });
    else backend.createFullTrainingModel('m', RANDOM_MODEL, initBase(config, 0, (n) => new Float32Array(n)) as Map<string, Float32Array>);
    const lossFn = mode === 'lora' ? 'importance_sampling' : 'cross_entropy';
    const out: Outcome = { logprobs: [], losses: [], gradNorms: [], weights: [] };
    for (let step = 0; step < 2; step++) {
      const fb = await backend.forwardBackward('m', data, lossFn, {}, false);
      out.logprobs.push(...fb.outputs.map((o) => Array.from(o.logprobs!.data)));
      out.losses.push(fb.metrics['loss:sum']!);
      out.gradNorms.push((await backend.optimStep('m', adam))['grad_norm:last']!);
    }
    out.weights = Array.from(mode === 'lora' ? await backend.exportState('m', false) : backend.exportBaseWeights('m', {}));
    return out;
  } finally {
    await backend.close();
    setUnzeroedFill(undefined);
  }
}

describe('arrays the training arena does not zero are written whole before they are read', function () {
  this.timeout(120_000);
  before(() => initCompute({ threads: 1, log: () => undefined }));

  it('the test hook fills such arrays (so a read-before-write would show)', () => {
    assert.strictEqual(computeInfo().kernel, 'wasm-simd', 'the WASM kernel (the arena) is in use');
    setUnzeroedFill(Number.NaN);
    const a = allocF32(8, false);
    const z = allocF32(8);
    try {
      assert.ok(a.every((v) => Number.isNaN(v)), 'unzeroed: NaN');
      assert.ok(z.every((v) => v === 0), 'zeroed: 0');
    } finally {
      freeF32(a);
      freeF32(z);
      setUnzeroedFill(undefined);
    }
  });

  const cases: Array<[string, GptConfig, 'lora' | 'full', () => EngineDatum[]]> = [
    ['LoRA, GRPO groups sharing their prompts (arith-gpt shape)', SMALL_GPT, 'lora', groups],
    ['full training, two 200-token sequences (arith-chat shape, attention as GEMMs)', CHAT_GPT, 'full', () => long(200)],
  ];
  for (const [name, config, mode, data] of cases) {
    it(`${name}: NaN-filled arrays change nothing`, async () => {
      const plain = await train(config, mode, data(), undefined);
      const poisoned = await train(config, mode, data(), Number.NaN);
      for (const [what, xs] of Object.entries({ losses: plain.losses, gradNorms: plain.gradNorms, logprobs: plain.logprobs.flat() })) {
        assert.ok(xs.every((v) => Number.isFinite(v)), `default run: finite ${what}`);
      }
      assert.deepStrictEqual(poisoned.losses, plain.losses, 'losses');
      assert.deepStrictEqual(poisoned.gradNorms, plain.gradNorms, 'gradient norms');
      assert.deepStrictEqual(poisoned.logprobs, plain.logprobs, 'log-probs');
      assert.ok(poisoned.weights.length > 0 && poisoned.weights.length === plain.weights.length, 'exported weights');
      assert.ok(poisoned.weights.every((v, i) => v === plain.weights[i]), 'updated weights, byte for byte');
    });
  }
});
