// tinker:// paths of checkpoints: tinker://<run>/<weights|sampler_weights>/<name>.
import { TinkerError } from './errors';

/** tinker://<run>/<weights|sampler_weights>/<name> → the run id and the two-segment checkpoint id. */
export function splitTinkerPath(p: string): { runId: string; checkpointId: string; kind: 'weights' | 'sampler_weights'; name: string } {
  if (!p.startsWith('tinker://')) throw new TinkerError(`"${p}" is not a tinker:// path`);
  const parts = p.slice('tinker://'.length).split('/');
  if (parts.length !== 3 || (parts[1] !== 'weights' && parts[1] !== 'sampler_weights') || !parts[0] || !parts[2]) {
    throw new TinkerError(`"${p}" is not of the form tinker://<run>/weights/<name> or tinker://<run>/sampler_weights/<name>`);
  }
  return { runId: parts[0], checkpointId: `${parts[1]}/${encodeURIComponent(parts[2])}`, kind: parts[1], name: parts[2] };
}
