// The Tinker data model in its logical (JSON) form, shared by the client and the embedded engine's
// server. Names follow the wire (snake_case) so that JSON bodies are these objects as they are.

export type DType = 'int64' | 'float32';
/** A dtype in a response: possibly one this client does not know. */
export type ResponseDType = DType | (string & {});

/** Numbers of a tensor: a plain array (JSON) or a typed array (protobuf paths avoid the copy). */
export type NumArray = readonly number[] | Float32Array | Float64Array | Int32Array;

export interface TensorData {
  data: NumArray;
  dtype: DType;
  /** absent ⇒ 1-D of data.length */
  shape?: number[] | null;
  sparse_crow_indices?: number[] | null;
  sparse_col_indices?: number[] | null;
}

export type ModelInputChunk =
  | { type: 'encoded_text'; tokens: NumArray }
  | { type: 'image'; data: string; format: 'png' | 'jpeg'; expected_tokens?: number | null }
  | { type: 'image_asset_pointer'; format: 'png' | 'jpeg'; location: string; expected_tokens?: number | null }
  | { type: 'dmel'; dmel: string };

export interface ModelInput {
  chunks: ModelInputChunk[];
}

export interface Datum {
  model_input: ModelInput;
  loss_fn_inputs: Record<string, TensorData>;
}

export const LOSS_FNS = ['cross_entropy', 'importance_sampling', 'ppo', 'cispo', 'dro'] as const;
export type LossFnType = (typeof LOSS_FNS)[number];

export interface ForwardBackwardRequestData {
  model_id: string;
  seq_id: number;
  data: Datum[];
  loss_fn: LossFnType;
  loss_fn_config?: Record<string, number> | null;
  forward_only?: boolean;
}

export interface ForwardBackwardOutput {
  loss_fn_output_type: string;
  loss_fn_outputs: Array<Record<string, TensorData>>;
  metrics: Record<string, number>;
}

/** Why sampling stopped; a value this client does not know is kept as the server sent it. */
export type StopReason = 'stop' | 'length' | (string & {});

export interface SampledSequence {
  stop_reason: StopReason;
  tokens: number[];
  logprobs?: number[] | null;
}

export interface SampleResponse {
  type?: 'sample';
  sequences: SampledSequence[];
  prompt_logprobs?: Array<number | null> | null;
  topk_prompt_logprobs?: Array<Array<[number, number]> | null> | null;
  prompt_cache_hit_tokens?: number;
}

export interface AdamParams {
  learning_rate: number;
  beta1: number;
  beta2: number;
  eps: number;
  weight_decay: number;
  grad_clip_norm: number;
}

export const DEFAULT_ADAM: AdamParams = {
  learning_rate: 1e-4,
  beta1: 0.9,
  beta2: 0.95,
  eps: 1e-12,
  weight_decay: 0,
  grad_clip_norm: 0,
};

export interface SamplingParams {
  max_tokens?: number;
  seed?: number;
  stop?: string | string[] | number[];
  temperature?: number;
  top_k?: number;
  top_p?: number;
}

export interface LoraConfig {
  rank: number;
  seed?: number;
  train_unembed?: boolean;
  train_mlp?: boolean;
  train_attn?: boolean;
}

/** Number of tokens of a model input (§4.2). */
export function modelInputLength(input: ModelInput): number {
  let n = 0;
  for (const c of input.chunks) {
    if (c.type === 'encoded_text') n += c.tokens.length;
    else if (c.type === 'image' || c.type === 'image_asset_pointer') {
      if (c.expected_tokens == null) throw new Error(`an ${c.type} chunk needs expected_tokens to know its length`);
      n += c.expected_tokens;
    } else throw new Error('the length of a dmel chunk is not computed by this client');
  }
  return n;
}

/** A model input made of one text chunk. */
export function textInput(tokens: NumArray): ModelInput {
  return { chunks: [{ type: 'encoded_text', tokens }] };
}
