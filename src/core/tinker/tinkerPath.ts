// tinker:// paths of checkpoints: tinker://<run>/<weights|sampler_weights>/<name>. The one parser of
// them: the client, the checkpoint views and the embedded engine all read paths through it.
import { TinkerError } from './errors';

export type CheckpointPathKind = 'weights' | 'sampler_weights';

/**
 * tinker://<run>/<weights|sampler_weights>/<name>, and the short form tinker://<run>/<name> (no kind:
 * the embedded engine looks the name up among both kinds). Throws a TinkerError naming the path.
 */
export function parseTinkerPath(p: string): { runId: string; kind: CheckpointPathKind | undefined; name: string } {
  if (!p.startsWith('tinker://')) throw new TinkerError(`"${p}" is not a tinker:// path`);
  const parts = p.slice('tinker://'.length).split('/');
  if (parts.length === 3 && (parts[1] === 'weights' || parts[1] === 'sampler_weights') && parts[0] && parts[2]) {
    return { runId: parts[0], kind: parts[1], name: parts[2] };
  }
  if (parts.length === 2 && parts[0] && parts[1]) return { runId: parts[0], kind: undefined, name: parts[1] };
  throw notOfTheForm(p);
}

/** tinker://<run>/<weights|sampler_weights>/<name> → the run id and the two-segment checkpoint id (the kind is required). */
export function splitTinkerPath(p: string): { runId: string; checkpointId: string; kind: CheckpointPathKind; name: string } {
  const { runId, kind, name } = parseTinkerPath(p);
  if (!kind) throw notOfTheForm(p);
  return { runId, checkpointId: `${kind}/${encodeURIComponent(name)}`, kind, name };
}

function notOfTheForm(p: string): TinkerError {
  return new TinkerError(`"${p}" is not of the form tinker://<run>/weights/<name> or tinker://<run>/sampler_weights/<name>`);
}
