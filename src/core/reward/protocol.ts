// The message protocol between a reward runner and its worker processes (Python or Node), the same
// for both: the parent sends `load` once, then batches; the worker answers `ready` (or `load_error`),
// then one `reward`/`failure` per case, in order, as each finishes — so the parent always knows which
// case is running when a time limit expires or the process dies.
import * as z from 'zod';

export type ToWorker =
  | { type: 'load'; file: string; source: string; format: 'python' | 'commonjs' | 'module'; memoryMb: number }
  | { type: 'score'; cases: Array<[completion: string, groundTruth: string]> };

/**
 * Caps on what a worker may send, so a runaway worker cannot flood the host's memory. The workers
 * truncate well below them (message 2,000, traceback 20,000, raw 1,000 characters); a message over
 * a cap means the worker (or user code writing to the channel) misbehaves: it is replaced.
 */
export const MAX_MESSAGE_LINE_BYTES = 1024 * 1024;
export const MAX_ERROR_MESSAGE_CHARS = 16 * 1024;
export const MAX_TRACEBACK_CHARS = 64 * 1024;
export const MAX_RAW_CHARS = 4 * 1024;

/** What the channel hands over instead of a line longer than MAX_MESSAGE_LINE_BYTES. */
export interface OversizedMessage {
  type: 'oversized';
  bytes: number;
}

const location = {
  message: z.string().max(MAX_ERROR_MESSAGE_CHARS),
  traceback: z.string().max(MAX_TRACEBACK_CHARS).optional(),
  line: z.number().int().positive().optional(),
  column: z.number().int().positive().optional(),
};

export const FromWorker = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('load_error'), ...location }),
  z.object({ type: z.literal('reward'), index: z.number().int().nonnegative(), reward: z.number(), format: z.number().optional(), durationMs: z.number().nonnegative() }),
  z.object({
    type: z.literal('failure'),
    index: z.number().int().nonnegative(),
    kind: z.enum(['exception', 'invalid_result', 'crash']),
    ...location,
    raw: z.string().max(MAX_RAW_CHARS).optional(),
    durationMs: z.number().nonnegative(),
  }),
]);
export type FromWorker = z.infer<typeof FromWorker>;
