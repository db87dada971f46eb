// What went wrong with a checkpoint operation, said about the checkpoint: expired, not found, no
// permission, already public/private, instead of the endpoint-level text of the HTTP error.
import { TinkerApiError } from '../tinker/errors';
import { errorMessage } from '../errors';

export type CheckpointProblem = 'expired' | 'not-found' | 'permission' | 'conflict' | 'other';

export class CheckpointError extends Error {
  constructor(
    message: string,
    readonly problem: CheckpointProblem,
    readonly tinkerPath: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'CheckpointError';
  }
}

export interface ErrorContext {
  /** what was being done, as a verb phrase: "publish", "delete", "download" */
  action: string;
  /** the expiry the caller last saw for this checkpoint, if any */
  expiresAt?: Date;
  now?: Date;
}

/** The CheckpointError for `err`, raised while doing `ctx.action` on `tinkerPath`. */
export function describeCheckpointError(err: unknown, tinkerPath: string, ctx: ErrorContext): CheckpointError {
  if (err instanceof CheckpointError) return err;
  const now = ctx.now ?? new Date();
  const status = err instanceof TinkerApiError ? err.status : undefined;
  const reason = errorMessage(err);
  if (status === 410 || (status === 404 && ctx.expiresAt && ctx.expiresAt.getTime() <= now.getTime())) {
    const when = ctx.expiresAt ? ` at ${ctx.expiresAt.toISOString()}` : '';
    return new CheckpointError(`cannot ${ctx.action} ${tinkerPath}: the checkpoint expired${when} and the server deleted it. Refresh the list; to keep checkpoints longer, clear or extend their TTL before it passes.`, 'expired', tinkerPath, err);
  }
  if (status === 404) {
    return new CheckpointError(`cannot ${ctx.action} ${tinkerPath}: the server has no such checkpoint (it was deleted, its TTL passed, or it is on another server). Refresh the list.`, 'not-found', tinkerPath, err);
  }
  if (status === 403) {
    return new CheckpointError(`cannot ${ctx.action} ${tinkerPath}: this API key has no permission for it (only the owner of a run can publish, delete or change the TTL of its checkpoints).`, 'permission', tinkerPath, err);
  }
  if (status === 409) {
    const detail = /already (public|private)/i.exec(reason)?.[0];
    return new CheckpointError(`cannot ${ctx.action} ${tinkerPath}: ${detail ? `it is ${detail.toLowerCase()}` : 'the server reports a conflict'}.`, 'conflict', tinkerPath, err);
  }
  return new CheckpointError(`cannot ${ctx.action} ${tinkerPath}: ${reason}`, 'other', tinkerPath, err);
}
