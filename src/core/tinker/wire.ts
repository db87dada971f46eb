// zod schemas of the JSON bodies of the Tinker protocol: responses (parsed by the client) and requests
// (parsed by the embedded engine). Response schemas are loose (unknown fields tolerated: the protocol
// is forward-compatible); a missing required field is an error that names the field.
import * as z from 'zod';
import { LOSS_FNS } from './types';

const num = z.number();
const int = z.number().int();
const str = z.string();

/**
 * An enum of a response: the values this client knows, typed, and any other string kept as it is
 * (the service adds values — checkpoint_type "external" since SDK 0.30 — and an old client must still
 * read the listing). Requests keep their strict z.enum.
 */
export function openEnum<const T extends readonly [string, ...string[]]>(_known: T) {
  return z.string().transform((s) => s as OpenEnum<T[number]>);
}
/** A known value, or any other string the service sent. */
export type OpenEnum<K extends string> = K | (string & {});

/** user_metadata as read: every value as text (a newer service, or another client, may store numbers). */
const metadataRecord = z.record(str, z.unknown()).transform((m) =>
  Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])) as Record<string, string>,
);

export const CHECKPOINT_TYPES = ['training', 'sampler', 'external'] as const;
export type CheckpointType = OpenEnum<(typeof CHECKPOINT_TYPES)[number]>;

// ---------- shared pieces ----------

export const TensorDataSchema = z.looseObject({
  data: z.array(num),
  dtype: z.enum(['int64', 'float32']),
  shape: z.array(int).nullish(),
  sparse_crow_indices: z.array(int).nullish(),
  sparse_col_indices: z.array(int).nullish(),
});

/** A tensor in a response: its dtype may be one this client does not know (kept as the server wrote it). */
export const ResponseTensorDataSchema = TensorDataSchema.extend({ dtype: openEnum(['int64', 'float32']) });

export const ModelInputChunkSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('encoded_text'), tokens: z.array(int) }),
  z.looseObject({ type: z.literal('image'), data: str, format: z.enum(['png', 'jpeg']), expected_tokens: int.nullish() }),
  z.looseObject({ type: z.literal('image_asset_pointer'), format: z.enum(['png', 'jpeg']), location: str, expected_tokens: int.nullish() }),
  z.looseObject({ type: z.literal('dmel'), dmel: str }),
]);

export const ModelInputSchema = z.looseObject({ chunks: z.array(ModelInputChunkSchema) });

export const DatumSchema = z.looseObject({
  model_input: ModelInputSchema,
  loss_fn_inputs: z.record(str, TensorDataSchema),
});

export const LossFnSchema = z.enum(LOSS_FNS);

export const AdamParamsSchema = z.looseObject({
  learning_rate: num.min(0).default(1e-4),
  beta1: num.min(0).lt(1).default(0.9),
  beta2: num.min(0).lt(1).default(0.95),
  eps: num.positive().default(1e-12),
  weight_decay: num.min(0).default(0),
  grad_clip_norm: num.min(0).default(0),
});

export const LoraConfigSchema = z.looseObject({
  rank: int.positive(),
  seed: int.nullish(),
  train_unembed: z.boolean().default(true),
  train_mlp: z.boolean().default(true),
  train_attn: z.boolean().default(true),
});

export const SamplingParamsSchema = z.looseObject({
  max_tokens: int.positive().nullish(),
  seed: int.nullish(),
  stop: z.union([str, z.array(str), z.array(int)]).nullish(),
  temperature: num.min(0).default(1),
  top_k: int.default(-1),
  top_p: num.gt(0).max(1).default(1),
});

// ---------- responses ----------

export const ClientConfigResponse = z.looseObject({
  pjwt_auth_enabled: z.boolean().default(false),
  credential_default_source: str.default('api_key'),
  sample_dispatch_bytes_semaphore_size: int.default(10_485_760),
  inflight_response_bytes_semaphore_size: int.default(52_428_800),
  parallel_fwdbwd_chunks: z.boolean().default(true),
  proto_compress_fwdbwd: z.boolean().default(false),
  fwdbwd_max_chunk_len: int.positive().default(1024),
  fwdbwd_max_chunk_bytes_count: int.positive().default(5_000_000),
  fwdbwd_dispatch_bytes_semaphore_size: int.default(50_000_000),
  billing_exception_max_pause_duration_sec: num.default(3600),
  sample_no_retries: z.boolean().default(false),
  sample_enable_stuck_detection: z.boolean().default(true),
  sample_max_concurrent_requests: int.positive().default(2000),
  create_model_via_load_weights: z.boolean().default(false),
});
export type ClientConfigResponse = z.infer<typeof ClientConfigResponse>;

export const DynamicConfigResponse = z.looseObject({ refresh_interval_sec: num.default(300) });
export const AuthTokenResponse = z.looseObject({ jwt: str });
export const HealthzResponse = z.looseObject({ status: str });

/** GET /api/v1/sessions: session ids (a newer service may send objects with a session_id: read both). */
export const SessionsResponse = z.looseObject({
  sessions: z.array(z.union([str, z.looseObject({ session_id: str })]).transform((s) => (typeof s === 'string' ? s : s.session_id))),
  cursor: z.looseObject({ offset: int, limit: int, total_count: int }).nullish(),
});
/** GET /api/v1/sessions/{id} */
export const SessionInfoResponse = z.looseObject({
  training_run_ids: z.array(str).default([]),
  sampler_ids: z.array(str).default([]),
});

export const ServerCapabilities = z.looseObject({
  supported_models: z.array(z.looseObject({ model_name: str.nullish(), max_context_length: int.nullish() })),
});
export type ServerCapabilities = z.infer<typeof ServerCapabilities>;

export const CreateSessionResponse = z.looseObject({
  session_id: str,
  info_message: str.nullish(),
  warning_message: str.nullish(),
  error_message: str.nullish(),
});

export const FutureHandle = z.looseObject({ request_id: z.union([str, int]).transform(String), model_id: str.nullish() });
export type FutureHandle = z.infer<typeof FutureHandle>;

export const TryAgainResponse = z.looseObject({
  type: z.literal('try_again'),
  request_id: str.optional(),
  queue_state: str.optional(),
  queue_state_reason: str.nullish(),
});
export const CompleteMetadataResponse = z.looseObject({ status: z.literal('complete_metadata'), response_payload_size: int.optional() });
export const FutureErrorResponse = z.looseObject({ error: str, category: str.default('unknown') });

export const CreateModelResult = z.looseObject({ model_id: str });
export const UnloadModelResult = z.looseObject({ model_id: str.nullish() });
export const OptimStepResult = z.looseObject({ metrics: z.record(str, num).nullish() });
export const SaveWeightsResult = z.looseObject({ path: str });
export const SaveWeightsForSamplerResult = z.looseObject({ path: str.nullish(), sampling_session_id: str.nullish() });
export const LoadWeightsResult = z.looseObject({ path: str.nullish(), model_id: str.nullish() });

export const ForwardBackwardOutputJson = z.looseObject({
  loss_fn_output_type: str.default('ArrayRecord'),
  loss_fn_outputs: z.array(z.record(str, ResponseTensorDataSchema)),
  metrics: z.record(str, num).default({}),
});

export const SampleResponseJson = z.looseObject({
  sequences: z.array(
    z.looseObject({ stop_reason: openEnum(['stop', 'length']), tokens: z.array(int), logprobs: z.array(num).nullish() }),
  ),
  prompt_logprobs: z.array(num.nullable()).nullish(),
  topk_prompt_logprobs: z.array(z.array(z.tuple([int, num])).nullable()).nullish(),
  prompt_cache_hit_tokens: int.default(0),
});

export const GetInfoResponse = z.looseObject({
  model_id: str,
  model_data: z.looseObject({ arch: str.nullish(), model_name: str.nullish(), tokenizer_id: str.nullish() }).nullish(),
  is_lora: z.boolean().nullish(),
  lora_rank: int.nullish(),
  model_name: str.nullish(),
});
export type GetInfoResponse = z.infer<typeof GetInfoResponse>;

export const CreateSamplingSessionResponse = z.looseObject({ sampling_session_id: str });
export const SamplerInfo = z.looseObject({ sampler_id: str, base_model: str, model_path: str.nullish() });

export const WeightsInfoResponse = z.looseObject({
  base_model: str,
  is_lora: z.boolean(),
  lora_rank: int.nullish(),
  train_unembed: z.boolean().nullish(),
  train_mlp: z.boolean().nullish(),
  train_attn: z.boolean().nullish(),
});
export type WeightsInfoResponse = z.infer<typeof WeightsInfoResponse>;

export const CheckpointSchema = z.looseObject({
  checkpoint_id: str,
  checkpoint_type: openEnum(CHECKPOINT_TYPES),
  time: str,
  tinker_path: str,
  size_bytes: int.nullish(),
  public: z.boolean().default(false),
  expires_at: str.nullish(),
  /** newer services: the base model the checkpoint was trained from */
  base_model: str.nullish(),
  /** newer services: the metadata given at save time */
  user_metadata: metadataRecord.nullish(),
});
export type Checkpoint = z.infer<typeof CheckpointSchema>;

export const CursorSchema = z.looseObject({ offset: int, limit: int, total_count: int });
export type Cursor = z.infer<typeof CursorSchema>;

export const TrainingRunSchema = z.looseObject({
  training_run_id: str,
  base_model: str,
  model_owner: str.default(''),
  is_lora: z.boolean().default(true),
  corrupted: z.boolean().default(false),
  lora_rank: int.nullish(),
  last_request_time: str.nullish(),
  last_checkpoint: CheckpointSchema.nullish(),
  last_sampler_checkpoint: CheckpointSchema.nullish(),
  user_metadata: metadataRecord.nullish(),
});
export type TrainingRun = z.infer<typeof TrainingRunSchema>;

export const TrainingRunsResponse = z.looseObject({ training_runs: z.array(TrainingRunSchema), cursor: CursorSchema.nullish() });
export const CheckpointsResponse = z.looseObject({ checkpoints: z.array(CheckpointSchema), cursor: CursorSchema.nullish() });
export const ArchiveUrlResponse = z.looseObject({ url: str, expires: str.nullish() });

// ---------- requests (what the engine accepts) ----------

export const SdkVersionBody = z.looseObject({ sdk_version: str.optional() });
export const CreateSessionRequest = z.looseObject({
  tags: z.array(str).default([]),
  user_metadata: z.record(str, z.unknown()).nullish(),
  sdk_version: str.optional(),
  project_id: str.nullish(),
});
export const HeartbeatRequest = z.looseObject({ session_id: str });
export const CreateModelRequest = z.looseObject({
  session_id: str,
  model_seq_id: int.min(0).default(0),
  base_model: str,
  user_metadata: z.record(str, z.unknown()).nullish(),
  lora_config: LoraConfigSchema,
});
export const ModelIdRequest = z.looseObject({ model_id: str });
export const ForwardBackwardJsonRequest = z.looseObject({
  forward_backward_input: z.looseObject({ data: z.array(DatumSchema), loss_fn: LossFnSchema, loss_fn_config: z.record(str, num).nullish() }),
  model_id: str,
  seq_id: int.positive(),
});
export const ForwardJsonRequest = z.looseObject({
  forward_input: z.looseObject({ data: z.array(DatumSchema), loss_fn: LossFnSchema, loss_fn_config: z.record(str, num).nullish() }),
  model_id: str,
  seq_id: int.positive(),
});
export const OptimStepRequest = z.looseObject({ adam_params: AdamParamsSchema, model_id: str, seq_id: int.positive() });
const CheckpointName = str.regex(/^[A-Za-z0-9_.-]+$/, 'a checkpoint name is letters, digits, "_", "-" and "." only').max(255);
export const SaveWeightsRequest = z.looseObject({
  model_id: str,
  path: CheckpointName,
  seq_id: int.positive(),
  ttl_seconds: int.positive().nullish(),
  overwrite: z.boolean().default(false),
  user_metadata: z.record(str, str).nullish(),
});
export const SaveWeightsForSamplerRequest = z.looseObject({
  model_id: str,
  path: CheckpointName.nullish(),
  sampling_session_seq_id: int.min(0).nullish(),
  seq_id: int.positive(),
  ttl_seconds: int.positive().nullish(),
  user_metadata: z.record(str, str).nullish(),
});
export const LoadWeightsRequest = z.looseObject({
  model_id: str.nullish(),
  seq_id: int.nullish(),
  session_id: str.nullish(),
  model_seq_id: int.nullish(),
  base_model: str.nullish(),
  user_metadata: z.record(str, z.unknown()).nullish(),
  path: str,
  optimizer: z.boolean().default(false),
  weights_access_token: str.nullish(),
});
export const CreateSamplingSessionRequest = z.looseObject({
  session_id: str,
  sampling_session_seq_id: int.min(0).default(0),
  base_model: str.nullish(),
  model_path: str.nullish(),
});
export const SampleRequestSchema = z.looseObject({
  num_samples: int.positive().default(1),
  prompt: ModelInputSchema,
  sampling_params: SamplingParamsSchema,
  sampling_session_id: str.nullish(),
  seq_id: int.nullish(),
  base_model: str.nullish(),
  model_path: str.nullish(),
  prompt_logprobs: z.boolean().default(false),
  topk_prompt_logprobs: int.min(0).default(0),
});
export const RetrieveFutureRequest = z.looseObject({ request_id: z.union([str, int]).transform(String), allow_metadata_only: z.boolean().default(false) });
export const WeightsInfoRequest = z.looseObject({ tinker_path: str });
export const TtlRequest = z.looseObject({ ttl_seconds: int.nullable() });

/** "field.path: message" of the first problem, for error text. */
export function describeZodError(err: z.ZodError): string {
  return err.issues
    .slice(0, 3)
    .map((i) => `${i.path.length ? i.path.join('.') : '(body)'}: ${i.message}`)
    .join('; ');
}
