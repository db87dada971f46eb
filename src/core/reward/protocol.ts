// The message protocol between a reward runner and its worker processes (Python or Node), the same
// for both: the parent sends `load` once, then batches; the worker answers `ready` (or `load_error`),
// then one `reward`/`failure` per case, in order, as each finishes — so the parent always knows which
// case is running when a time limit expires or the process dies.
import { z } from 'zod';

export type ToWorker =
  | { type: 'load'; file: string; source: string; format: 'python' | 'commonjs' | 'module'; memoryMb: number }
  | { type: 'score'; cases: Array<[completion: string, groundTruth: string]> };

const location = {
  message: z.string(),
  traceback: z.string().optional(),
  line: z.number().int().positive().optional(),
  column: z.number().int().positive().optional(),
};

export const FromWorker = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('load_error'), ...location }),
  z.object({ type: z.literal('reward'), index: z.number().int().nonnegative(), reward: z.number(), durationMs: z.number().nonnegative() }),
  z.object({
    type: z.literal('failure'),
    index: z.number().int().nonnegative(),
    kind: z.enum(['exception', 'invalid_result', 'crash']),
    ...location,
    raw: z.string().optional(),
    durationMs: z.number().nonnegative(),
  }),
]);
export type FromWorker = z.infer<typeof FromWorker>;
