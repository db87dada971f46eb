// The contract between the embedded engine's HTTP layer (src/engine/server: protocol, futures,
// sessions, checkpoint storage) and its compute layer (src/engine/model: the small GPT, LoRA,
// losses, Adam, sampling). The server never touches tensors of the model; the compute layer never
// sees HTTP, ids from the wire other than the opaque handles below, or the disk.
//
// Everything here is plain data so that the compute layer can live in a worker thread and these
// calls can cross a MessagePort (typed arrays are transferable / structured-cloneable).

/** How a model turns text into token ids. The engine's models are byte-level. */
export interface ByteTokenizerSpec {
  kind: 'byte';
  /** ids 0..255 are the raw UTF-8 bytes; special tokens follow. */
  vocabSize: number;
  /** special token text -> id, e.g. {"<|endoftext|>": 256, "<|im_start|>": 257, "<|im_end|>": 258} */
  specialTokens: Record<string, number>;
  /** end-of-sequence token text (one of specialTokens) */
  eosToken: string;
  /** beginning-of-sequence token text, if the format uses one */
  bosToken?: string;
}

/** A base model the engine serves (what get_server_capabilities lists). */
export interface BaseModelInfo {
  /** e.g. "tinker-studio/arith-gpt-2l" — used as base_model on the wire */
  name: string;
  maxContextLength: number;
  parameterCount: number;
  tokenizer: ByteTokenizerSpec;
  /**
   * The chat layout the model was pretrained on, named like a cookbook renderer so the
   * extension's renderer layer can pick it up ("chatml" = `<|im_start|>{role}\n{content}<|im_end|>\n`,
   * generation prompt `<|im_start|>assistant\n`, stop token `<|im_end|>`).
   */
  renderer: string;
  /** free text: what the weights were trained on and how to reproduce them */
  provenance: string;
}

export interface LoraConfig {
  rank: number;
  /** seed of the LoRA initialisation; the server picks one when the client does not */
  seed: number;
  trainMlp: boolean;
  trainAttn: boolean;
  trainUnembed: boolean;
}

export type LossFn = 'cross_entropy' | 'importance_sampling' | 'ppo' | 'cispo' | 'dro';

/** One tensor of loss_fn_inputs, already decoded from protobuf or JSON. */
export interface InputTensor {
  dtype: 'float32' | 'int64';
  /** row-major values; int64 values are held as numbers (token ids and small ints only) */
  data: Float32Array | Float64Array;
  shape: number[];
}

export interface EngineDatum {
  /** model_input: the encoded_text chunks concatenated */
  tokens: Int32Array;
  lossFnInputs: Record<string, InputTensor>;
}

export interface OutputTensor {
  dtype: 'float32';
  data: Float32Array;
  shape: number[];
}

export interface ForwardBackwardResult {
  /** per datum, in input order: at least `logprobs` (learner log-probs of target_tokens) */
  outputs: Array<Record<string, OutputTensor>>;
  /** e.g. {"loss:sum": 12.5} */
  metrics: Record<string, number>;
}

export interface AdamParams {
  learningRate: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** 0 = no clipping */
  gradClipNorm: number;
}

export interface SamplingParams {
  maxTokens: number;
  temperature: number;
  /** 1 = no nucleus truncation */
  topP: number;
  /** -1 = no limit */
  topK: number;
  stopStrings: string[];
  stopTokens: number[];
  /** same seed, same prompt, same weights => same samples */
  seed?: number;
}

export interface SampledSequence {
  tokens: Int32Array;
  logprobs: Float32Array;
  stopReason: 'stop' | 'length';
}

export interface SampleResult {
  sequences: SampledSequence[];
  /** one per prompt token, NaN for the first (undefined) position; present iff requested */
  promptLogprobs?: Float32Array;
  /** per prompt position up to k (token, logprob) pairs; null for position 0; present iff requested */
  topkPromptLogprobs?: Array<Array<[number, number]> | null>;
}

export interface SampleRequest {
  prompt: Int32Array;
  numSamples: number;
  params: SamplingParams;
  promptLogprobs: boolean;
  topkPromptLogprobs: number;
}

/** What the weights of a saved state are, without loading them (for weights_info and loads). */
export interface StateDescription {
  baseModel: string;
  lora: LoraConfig;
  hasOptimizerState: boolean;
}

/**
 * The compute layer. Handles are opaque strings chosen by the server (model ids, sampler ids).
 * Every method may reject with an Error whose message is fit to show a user (bad token id,
 * sequence too long, unknown loss input); the server turns it into a future error of category
 * "user". Calls for one training model are issued by the server strictly in seq_id order and one
 * at a time; sampling calls may arrive concurrently with anything.
 */
export interface ComputeBackend {
  listBaseModels(): BaseModelInfo[];

  createTrainingModel(modelId: string, baseModel: string, lora: LoraConfig): Promise<void>;
  forwardBackward(
    modelId: string,
    data: EngineDatum[],
    lossFn: LossFn,
    lossFnConfig: Record<string, number>,
    forwardOnly: boolean,
  ): Promise<ForwardBackwardResult>;
  /** applies and clears the accumulated gradients; returns optimizer metrics */
  optimStep(modelId: string, adam: AdamParams): Promise<Record<string, number>>;
  /** serialises the trainable (LoRA) weights, and the Adam state when asked; bit-exact round trip */
  exportState(modelId: string, withOptimizer: boolean): Promise<Uint8Array>;
  /** loads a state produced by exportState into an existing model created with the same config */
  importState(modelId: string, state: Uint8Array, withOptimizer: boolean): Promise<void>;
  describeState(state: Uint8Array): StateDescription;
  releaseTrainingModel(modelId: string): Promise<void>;

  /** a sampler over a base model alone, or over base + the LoRA weights of a saved state */
  createSampler(samplerId: string, source: { baseModel: string } | { state: Uint8Array }): Promise<void>;
  sample(samplerId: string, request: SampleRequest): Promise<SampleResult>;
  releaseSampler(samplerId: string): Promise<void>;

  close(): Promise<void>;
}
