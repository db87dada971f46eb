// A training-run record of the engine store, for the store tests.
import type { RunRecord } from '../../../src/engine/server/store';

export function runRecord(id: string): RunRecord {
  const t = new Date(0).toISOString();
  return {
    training_run_id: id,
    base_model: 'm',
    model_owner: 'local-engine',
    is_lora: true,
    corrupted: false,
    lora_rank: 2,
    train_mlp: true,
    train_attn: true,
    train_unembed: true,
    created: t,
    last_request_time: t,
    user_metadata: null,
    checkpoints: [],
  };
}
