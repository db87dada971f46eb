// The engine's compute layer in one thread: base models, LoRA training models, samplers. Implements
// the ComputeBackend contract the HTTP server drives (src/engine/contract.ts).
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type {
  AdamParams,
  BaseModelInfo,
  ComputeBackend,
  EngineDatum,
  ForwardBackwardResult,
  LoraConfig,
  LossFn,
  SampleRequest,
  SampleResult,
  StateDescription,
} from '../contract';
import { AdamState, adamStep, newAdamState } from './adam';
import { allocF32Sparing, freeF32 } from '../compute';
import { Alloc, Gpt, Scratch } from './gpt';
import { GptConfig, LoraSpec, Params, baseShapes, initBase, initLora, mergeLora, numel } from './gptWeights';
import { checkLossConfig, computeLoss } from './losses';
import { DecodeParams, Generation, Sampler } from './sampler';
import { readTensorFile, writeTensorFile } from './tensorFile';
import { BYTE_TOKENIZER, PRETRAINED_MODELS, RANDOM_MODEL, SMALL_GPT, WEIGHTS_FILE, findWeightsFile } from './models';

export const STATE_MAGIC = 'TSSTATE1';
export const WEIGHTS_MAGIC = 'TSWGHT01';
/** LoRA alpha: the adapter's output is scaled by alpha / rank. */
export const LORA_ALPHA = 32;
/** datums are processed in micro-batches of about this many tokens to bound memory */
const MICRO_BATCH_TOKENS = 4096;
/**
 * The compute kernel's memory for the engine (MiB): a micro-batch's activations live there while it
 * is forwarded and backpropagated (4,096 tokens of a 4-layer d=160 model with 256-token sequences
 * take some 600 MiB); when it is full the rest goes to ordinary arrays, which is correct but slower.
 */
export const ENGINE_MEMORY_MB = 1536;
/** sequences decoded in lockstep at most (a few MB of KV cache at the engine's context) */
const MAX_BATCH_STREAMS = 1024;

interface BaseModel {
  info: BaseModelInfo;
  config: GptConfig;
  params: Params;
}

interface TrainingModel {
  id: string;
  base: BaseModel;
  lora: LoraConfig;
  /** 'full' trains the base weights themselves (pretraining only; never on the wire) */
  mode: 'lora' | 'full';
  /** the weights being trained: LoRA adapters, or a private copy of the base weights */
  trainable: Params;
  grads: Params;
  adam: AdamState;
  spec: LoraSpec | undefined;
}

const f32 = (n: number) => new Float32Array(n);

export interface LocalBackendOptions {
  /** folder with the pretrained weights file (default: found next to the code) */
  weightsDir?: string;
  /** only for tests and pretraining: the random model's architecture */
  config?: GptConfig;
  /** GEMM threads, used where the backend runs in its own worker */
  gemmThreads?: 1 | 2;
  /** forward a token prefix shared by several datums once (default true; off for comparisons) */
  sharePrefixes?: boolean;
}

/** A pretrained base model from its weights file (architecture and provenance in its header). */
function loadPretrained(name: string, file: string): BaseModel {
  const w = readTensorFile(new Uint8Array(fs.readFileSync(file)), WEIGHTS_MAGIC, file);
  const cfg = w.meta.config as GptConfig;
  const params: Params = new Map();
  for (const [tensor, shape] of baseShapes(cfg)) {
    const t = w.tensors.get(tensor);
    if (!t || t.length !== numel(shape)) throw new Error(`${file}: tensor ${tensor} is missing or has the wrong size`);
    params.set(tensor, t);
  }
  return {
    info: {
      name,
      maxContextLength: cfg.ctx,
      parameterCount: countParams(cfg),
      tokenizer: BYTE_TOKENIZER,
      renderer: 'chatml',
      provenance: typeof w.meta.provenance === 'string' ? w.meta.provenance : `pretrained weights from ${path.basename(file)}`,
    },
    config: cfg,
    params,
  };
}

export class LocalBackend implements ComputeBackend {
  private readonly bases = new Map<string, BaseModel>();
  private readonly models = new Map<string, TrainingModel>();
  private readonly samplers = new Map<string, { sampler: Sampler; base: BaseModel }>();
  private readonly queuedSamples: QueuedSample[] = [];
  private readonly sharePrefixes: boolean;

  constructor(opts: LocalBackendOptions = {}) {
    this.sharePrefixes = opts.sharePrefixes ?? true;
    const config = opts.config ?? SMALL_GPT;
    this.bases.set(RANDOM_MODEL, {
      info: {
        name: RANDOM_MODEL,
        maxContextLength: config.ctx,
        parameterCount: countParams(config),
        tokenizer: BYTE_TOKENIZER,
        renderer: 'chatml',
        provenance: 'randomly initialised (seed 0), GPT-2-style initialisation; for experiments from scratch',
      },
      config,
      params: initBase(config, 0, f32),
    });
    for (const { name, file: fileName } of PRETRAINED_MODELS) {
      const file = findWeightsFile(opts.weightsDir, fileName);
      if (file) this.bases.set(name, loadPretrained(name, file));
    }
  }

  listBaseModels(): BaseModelInfo[] {
    return [...this.bases.values()].map((b) => b.info);
  }

  private base(name: string): BaseModel {
    const b = this.bases.get(name);
    if (!b) throw new Error(`base model "${name}" is not served by the local engine (available: ${[...this.bases.keys()].join(', ')})`);
    return b;
  }

  private model(id: string): TrainingModel {
    const m = this.models.get(id);
    if (!m) throw new Error(`training model ${id} is not loaded`);
    return m;
  }

  async createTrainingModel(modelId: string, baseModel: string, lora: LoraConfig): Promise<void> {
    const base = this.base(baseModel);
    if (!(lora.rank >= 1 && lora.rank <= 256)) throw new Error(`LoRA rank ${lora.rank} is outside 1..256`);
    const spec: LoraSpec = { rank: lora.rank, alpha: LORA_ALPHA, attn: lora.trainAttn, mlp: lora.trainMlp, unembed: lora.trainUnembed };
    const trainable = initLora(base.config, spec, lora.seed, f32);
    this.models.set(modelId, { id: modelId, base, lora, mode: 'lora', trainable, grads: zerosLike(trainable), adam: newAdamState(trainable), spec });
  }

  /** Pretraining: a model whose base weights themselves are trained (not reachable over HTTP). */
  /**
   * Pretraining: a model that trains every base weight, starting from `baseModel`'s weights, or from
   * `init`'s for the tensors it gives (a warm start; each must have the base tensor's size).
   */
  createFullTrainingModel(modelId: string, baseModel: string, init?: ReadonlyMap<string, Float32Array>): void {
    const base = this.base(baseModel);
    for (const [k, v] of init ?? []) {
      const b = base.params.get(k);
      if (!b || b.length !== v.length) throw new Error(`initial weights: ${k} ${b ? `has ${v.length} values, the model's has ${b.length}` : 'is not a weight of the model'}`);
    }
    const trainable: Params = new Map([...base.params].map(([k, v]) => [k, Float32Array.from(init?.get(k) ?? v)]));
    this.models.set(modelId, {
      id: modelId,
      base: { ...base, params: trainable },
      lora: { rank: 1, seed: 0, trainAttn: false, trainMlp: false, trainUnembed: false },
      mode: 'full',
      trainable,
      grads: zerosLike(trainable),
      adam: newAdamState(trainable),
      spec: undefined,
    });
  }

  /** Pretraining: the trained base weights of a full model as a weights file. */
  exportBaseWeights(modelId: string, meta: Record<string, unknown>): Uint8Array {
    const m = this.model(modelId);
    if (m.mode !== 'full') throw new Error('only a full training model has base weights to export');
    const ordered = new Map(baseShapes(m.base.config).map(([name]) => [name, m.trainable.get(name) as Float32Array]));
    return writeTensorFile(WEIGHTS_MAGIC, { ...meta, config: m.base.config }, ordered);
  }

  private gpt(m: TrainingModel, alloc: Alloc = f32, scratch?: Scratch): Gpt {
    return m.mode === 'full'
      ? new Gpt(m.base.config, m.trainable, undefined, undefined, alloc, scratch)
      : new Gpt(m.base.config, m.base.params, m.trainable, m.spec, alloc, scratch);
  }

  async forwardBackward(modelId: string, data: EngineDatum[], lossFn: LossFn, lossFnConfig: Record<string, number>, forwardOnly: boolean): Promise<ForwardBackwardResult> {
    const m = this.model(modelId);
    checkLossConfig(lossFn, lossFnConfig);
    // a micro-batch's activations live in the compute kernel's memory (shared with its helper thread,
    // no copies around the GEMM) and are given back when it is done
    const arena = new Arena();
    const gpt = this.gpt(m, (n, zeroed) => arena.alloc(n, zeroed), arena);
    const V = m.base.config.vocabSize;
    let lossSum = 0;
    // validate everything before touching the gradients
    // targets per position: 1 (shape (N,)) or K (shape (N, K), cross_entropy's top-K form)
    const perPosition: number[] = [];
    const targets = data.map((d, i) => {
      const t = d.lossFnInputs.target_tokens;
      if (!t) throw new Error(`datum ${i}: loss_fn_inputs.target_tokens is required`);
      const n = d.tokens.length;
      if (t.shape.length === 2) {
        const [rows, K] = t.shape as [number, number];
        if (lossFn !== 'cross_entropy') throw new Error(`datum ${i}: target_tokens of shape (N, K) = (${rows}, ${K}) are taken by cross_entropy only; ${lossFn} needs (N,)`);
        if (rows !== n) throw new Error(`datum ${i}: target_tokens has ${rows} rows but model_input has ${n} tokens`);
        if (K < 1) throw new Error(`datum ${i}: target_tokens of shape (${rows}, ${K}) has no targets per position`);
        perPosition.push(K);
      } else if (t.shape.length === 1) {
        if (t.data.length !== n) throw new Error(`datum ${i}: target_tokens has ${t.data.length} values but model_input has ${n} tokens`);
        perPosition.push(1);
      } else throw new Error(`datum ${i}: target_tokens must have shape (N,) or (N, K), got (${t.shape.join(', ')})`);
      if (n === 0) throw new Error(`datum ${i}: model_input is empty`);
      if (n > m.base.config.ctx) throw new Error(`datum ${i}: ${n} tokens is longer than the model's context of ${m.base.config.ctx}`);
      return Int32Array.from(t.data);
    });
    // datums that cannot move the weights (zero advantages or weights) are forwarded together, last,
    // so their micro-batches skip the backward pass; outputs keep the request's order
    const inert = data.map((d) => cannotMoveWeights(lossFn, d));
    const indices = data.map((_, k) => k);
    const units = [false, true].flatMap((inertPart) => {
      const part = indices.filter((k) => inert[k] === inertPart);
      return this.sharePrefixes ? groupByPrefix(part, data) : part.map((k) => ({ prefix: 0, members: [k] }));
    });
    const unitSizes = units.map((u) => unitTokens(u, data));
    const outputs = new Array<ForwardBackwardResult['outputs'][number]>(data.length);
    let i = 0;
    try {
      while (i < units.length) {
        let j = i;
        let tokens = 0;
        while (j < units.length && (j === i || tokens + unitSizes[j]! <= MICRO_BATCH_TOKENS)) tokens += unitSizes[j++]!;
        // one root sequence per shared prefix, then each datum's remaining tokens continuing it
        const all = new Int32Array(tokens);
        const lens: number[] = [];
        const parents: number[] = [];
        const rowsOf = new Map<number, Int32Array>();
        let at = 0;
        for (const u of units.slice(i, j)) {
          const root = lens.length;
          const rootStart = at;
          if (u.prefix > 0) {
            all.set(data[u.members[0]!]!.tokens.subarray(0, u.prefix), at);
            lens.push(u.prefix);
            parents.push(-1);
            at += u.prefix;
          }
          for (const k of u.members) {
            const tk = data[k]!.tokens;
            all.set(tk.subarray(u.prefix), at);
            lens.push(tk.length - u.prefix);
            parents.push(u.prefix > 0 ? root : -1);
            const rows = new Int32Array(tk.length);
            for (let t = 0; t < tk.length; t++) rows[t] = t < u.prefix ? rootStart + t : at + t - u.prefix;
            rowsOf.set(k, rows);
            at += tk.length - u.prefix;
          }
        }
        const fwd = gpt.forward(all, lens, parents);
        const members = units.slice(i, j).flatMap((u) => u.members);
        const contributions = members.reduce((n, k) => n + data[k]!.tokens.length * perPosition[k]!, 0);
        const tg = new Int32Array(contributions);
        const rowIdx = new Int32Array(contributions);
        const dlp = new Float32Array(contributions);
        let moves = false;
        let e = 0;
        for (const k of members) {
          const d = data[k]!;
          const K = perPosition[k]!;
          const n = d.tokens.length * K;
          const rows = rowsOf.get(k)!;
          // entry t·K + j: the j-th target of position t
          const lp = new Float64Array(n);
          for (let t = 0; t < n; t++) {
            const target = targets[k]![t]!;
            if (!(target >= 0 && target < V)) throw new Error(`datum ${k}: target token ${target} is outside the vocabulary (0..${V - 1})`);
            lp[t] = fwd.logprobs[rows[Math.floor(t / K)]! * V + target]!;
          }
          const out = computeLoss(lossFn, { logprobs: lp, inputs: d.lossFnInputs, config: lossFnConfig, targetShape: d.lossFnInputs.target_tokens!.shape }, k);
          lossSum += out.loss;
          for (let t = 0; t < n; t++, e++) {
            tg[e] = targets[k]![t]!;
            rowIdx[e] = rows[Math.floor(t / K)]!;
            dlp[e] = out.grad[t]!;
            if (out.grad[t] !== 0) moves = true;
          }
          const shape = [...d.lossFnInputs.target_tokens!.shape];
          outputs[k] = {
            logprobs: { dtype: 'float32', data: Float32Array.from(lp), shape },
            elementwise_loss: { dtype: 'float32', data: out.elementwise, shape: [...shape] },
          };
        }
        // a zero upstream gradient adds exactly zero to every parameter's gradient
        if (!forwardOnly && moves) gpt.backward(fwd, tg, dlp, m.grads, rowIdx);
        arena.release();
        i = j;
      }
    } finally {
      arena.release();
    }
    return { outputs, metrics: { 'loss:sum': lossSum } };
  }

  async optimStep(modelId: string, adam: AdamParams): Promise<Record<string, number>> {
    const m = this.model(modelId);
    return adamStep(m.trainable, m.grads, m.adam, adam);
  }

  async exportState(modelId: string, withOptimizer: boolean): Promise<Uint8Array> {
    const m = this.model(modelId);
    if (m.mode !== 'lora') throw new Error('a full training model is saved with exportBaseWeights');
    const tensors = new Map<string, Float32Array | Float64Array>();
    for (const [k, v] of m.trainable) tensors.set(`w:${k}`, v);
    if (withOptimizer) {
      for (const [k, v] of m.adam.m) tensors.set(`m:${k}`, v);
      for (const [k, v] of m.adam.v) tensors.set(`v:${k}`, v);
    }
    return writeTensorFile(STATE_MAGIC, { baseModel: m.base.info.name, lora: m.lora, hasOptimizerState: withOptimizer, adamStep: m.adam.step }, tensors);
  }

  describeState(state: Uint8Array): StateDescription {
    const f = readTensorFile(state, STATE_MAGIC, 'checkpoint');
    const lora = f.meta.lora as LoraConfig | undefined;
    if (typeof f.meta.baseModel !== 'string' || !lora || typeof lora.rank !== 'number') throw new Error('checkpoint: the header lacks baseModel or lora');
    return { baseModel: f.meta.baseModel, lora, hasOptimizerState: f.meta.hasOptimizerState === true };
  }

  async importState(modelId: string, state: Uint8Array, withOptimizer: boolean): Promise<void> {
    const m = this.model(modelId);
    const f = readTensorFile(state, STATE_MAGIC, 'checkpoint');
    const d = this.describeState(state);
    if (d.baseModel !== m.base.info.name) throw new Error(`the checkpoint is for ${d.baseModel}, the model is ${m.base.info.name}`);
    for (const [k, v] of m.trainable) {
      const t = f.tensors.get(`w:${k}`);
      if (!t || t.length !== v.length) throw new Error(`the checkpoint has no matching tensor for ${k} (different LoRA settings?)`);
      v.set(t);
    }
    for (const g of m.grads.values()) g.fill(0);
    // the model now is the checkpoint's (its LoRA seed included), so a re-export is bit-identical
    m.lora = { ...d.lora };
    if (withOptimizer) {
      if (!d.hasOptimizerState) throw new Error('the checkpoint has no optimizer state');
      for (const [k, v] of m.adam.m) v.set(f.tensors.get(`m:${k}`)!);
      for (const [k, v] of m.adam.v) v.set(f.tensors.get(`v:${k}`)!);
      m.adam.step = typeof f.meta.adamStep === 'number' ? f.meta.adamStep : 0;
    } else {
      m.adam = newAdamState(m.trainable);
    }
  }

  async releaseTrainingModel(modelId: string): Promise<void> {
    this.models.delete(modelId);
  }

  async createSampler(samplerId: string, source: { baseModel: string } | { state: Uint8Array }): Promise<void> {
    if ('baseModel' in source) {
      const base = this.base(source.baseModel);
      this.samplers.set(samplerId, { sampler: new Sampler(base.config, mergeLora(base.config, base.params, undefined, undefined)), base });
      return;
    }
    const f = readTensorFile(source.state, STATE_MAGIC, 'sampler weights');
    const d = this.describeState(source.state);
    const base = this.base(d.baseModel);
    const spec: LoraSpec = { rank: d.lora.rank, alpha: LORA_ALPHA, attn: d.lora.trainAttn, mlp: d.lora.trainMlp, unembed: d.lora.trainUnembed };
    const lora: Params = new Map();
    for (const [name, t] of f.tensors) if (name.startsWith('w:')) lora.set(name.slice(2), t);
    this.samplers.set(samplerId, { sampler: new Sampler(base.config, mergeLora(base.config, base.params, lora, spec)), base });
  }

  /**
   * Queues the request; every request queued before the event loop turns is served in one batch
   * (see flushSamples). The sampler is taken now, so releasing it afterwards does not fail the call.
   */
  async sample(samplerId: string, req: SampleRequest): Promise<SampleResult> {
    const s = this.samplers.get(samplerId);
    if (!s) throw new Error(`sampler ${samplerId} is not loaded`);
    const enc = new TextEncoder();
    const seed = req.params.seed ?? randomBytes(4).readUInt32LE(0);
    const params: DecodeParams = {
      maxTokens: req.params.maxTokens,
      temperature: req.params.temperature,
      topP: req.params.topP,
      topK: req.params.topK,
      stopTokens: req.params.stopTokens,
      stopBytes: req.params.stopStrings.map((x) => enc.encode(x)),
      eosToken: BYTE_TOKENIZER.specialTokens[BYTE_TOKENIZER.eosToken]!,
      seed: Number(BigInt.asUintN(32, BigInt(Math.trunc(seed)))),
    };
    return new Promise<SampleResult>((resolve, reject) => {
      this.queuedSamples.push({ sampler: s.sampler, req, params, resolve, reject });
      if (this.queuedSamples.length === 1) setImmediate(() => this.flushSamples());
    });
  }

  /** Serves the queued requests, one batch per sampler of at most MAX_BATCH_STREAMS sequences. */
  private flushSamples(): void {
    const queued = this.queuedSamples.splice(0);
    const bySampler = new Map<Sampler, QueuedSample[]>();
    for (const q of queued) {
      const list = bySampler.get(q.sampler);
      if (list) list.push(q);
      else bySampler.set(q.sampler, [q]);
    }
    for (const [sampler, list] of bySampler) {
      for (let a = 0; a < list.length; ) {
        let b = a;
        let streams = 0;
        while (b < list.length && (b === a || streams + list[b]!.req.numSamples <= MAX_BATCH_STREAMS)) streams += list[b++]!.req.numSamples;
        serveBatch(sampler, list.slice(a, b));
        a = b;
      }
    }
  }

  async releaseSampler(samplerId: string): Promise<void> {
    this.samplers.delete(samplerId);
  }

  async close(): Promise<void> {
    this.models.clear();
    this.samplers.clear();
  }
}

/**
 * Whether a datum's loss gradient is zero whatever the model says: the policy-gradient losses scale
 * it by the advantage (dro's penalty does not), cross_entropy by the weight. Only orders the work:
 * the backward pass is skipped on the gradient actually computed.
 */
function cannotMoveWeights(lossFn: LossFn, d: EngineDatum): boolean {
  const allZero = (name: string) => {
    const t = d.lossFnInputs[name];
    return t !== undefined && t.data.every((v) => v === 0);
  };
  if (lossFn === 'cross_entropy') return allZero('weights');
  return lossFn !== 'dro' && allZero('advantages');
}

/** Datums forwarded together: `prefix` leading tokens shared by all members (0: nothing shared). */
export interface PrefixUnit {
  prefix: number;
  members: number[];
}

function unitTokens(u: PrefixUnit, data: readonly EngineDatum[]): number {
  return u.members.reduce((n, k) => n + data[k]!.tokens.length - u.prefix, u.prefix);
}

function commonPrefix(a: Int32Array, b: Int32Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * Groups datums whose token sequences begin alike (a GRPO group's prompt): in lexicographic order,
 * a datum joins the group before it while the tokens saved do not shrink. Each member keeps at least
 * one token of its own.
 */
export function groupByPrefix(part: number[], data: readonly EngineDatum[]): PrefixUnit[] {
  const sorted = [...part].sort((a, b) => {
    const x = data[a]!.tokens;
    const y = data[b]!.tokens;
    const p = commonPrefix(x, y);
    if (p < x.length && p < y.length) return x[p]! - y[p]!;
    return x.length - y.length || a - b;
  });
  const units: PrefixUnit[] = [];
  let cur: PrefixUnit | undefined;
  for (const k of sorted) {
    const tk = data[k]!.tokens;
    if (cur) {
      const prev = data[cur.members[cur.members.length - 1]!]!.tokens;
      const first = data[cur.members[0]!]!.tokens;
      const shared = Math.min(cur.members.length === 1 ? first.length - 1 : cur.prefix, commonPrefix(prev, tk), tk.length - 1);
      const savedBefore = (cur.members.length - 1) * cur.prefix;
      if (shared > 0 && cur.members.length * shared >= savedBefore) {
        cur.prefix = shared;
        cur.members.push(k);
        continue;
      }
      units.push(cur);
    }
    cur = { prefix: 0, members: [k] };
  }
  if (cur) units.push(cur);
  return units;
}

interface QueuedSample {
  sampler: Sampler;
  req: SampleRequest;
  params: DecodeParams;
  resolve: (r: SampleResult) => void;
  reject: (e: Error) => void;
}

function serveBatch(sampler: Sampler, batch: readonly QueuedSample[]): void {
  let out: Array<Generation | Error>;
  try {
    out = sampler.serve(
      batch.map((q) => ({
        prompt: q.req.prompt,
        numSamples: q.req.numSamples,
        params: q.params,
        ...(q.req.promptLogprobs || q.req.topkPromptLogprobs > 0 ? { promptLogprobs: { topk: q.req.topkPromptLogprobs } } : {}),
      })),
    );
  } catch (err) {
    for (const q of batch) q.reject(err instanceof Error ? err : new Error(String(err)));
    return;
  }
  batch.forEach((q, i) => {
    const gen = out[i]!;
    if (gen instanceof Error) return q.reject(gen);
    try {
      const result: SampleResult = {
        sequences: gen.sequences.map((x) => ({ tokens: Int32Array.from(x.tokens), logprobs: Float32Array.from(x.logprobs), stopReason: x.stopReason })),
      };
      if (gen.prompt) {
        result.promptLogprobs = gen.prompt.logprobs;
        if (gen.prompt.topk) result.topkPromptLogprobs = gen.prompt.topk;
      }
      q.resolve(result);
    } catch (err) {
      q.reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}

/**
 * Float32Arrays from the compute kernel's memory (ordinary ones when it is full), given back together
 * (release) or back to a mark (the backward pass's per-layer scratch).
 */
class Arena implements Scratch {
  private readonly live: Float32Array[] = [];
  alloc(n: number, zeroed = true): Float32Array {
    // leave room for gemm's copies of operands from outside (weights): a gemm that cannot copy them
    // in would fall back to the reference, which rounds differently
    const a = allocF32Sparing(n, 64 << 20, zeroed);
    this.live.push(a);
    return a;
  }
  mark(): number {
    return this.live.length;
  }
  releaseTo(mark: number): void {
    for (const a of this.live.splice(mark)) freeF32(a);
  }
  release(): void {
    this.releaseTo(0);
  }
}

function zerosLike(p: Params): Params {
  return new Map([...p].map(([k, v]) => [k, new Float32Array(v.length)]));
}

export function countParams(c: GptConfig): number {
  return baseShapes(c).reduce((a, [, s]) => a + numel(s), 0);
}

export { WEIGHTS_FILE };
