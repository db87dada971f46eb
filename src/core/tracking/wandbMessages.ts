// The messages between a W&B tracker (the parent) and its logger child process (wandbLogger.ts),
// over the child_process IPC channel. Both sides parse what they receive with these schemas.
import * as z from 'zod';

const finite = z.number().finite();

export const WandbInit = z.object({
  id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  project: z.string().min(1),
  entity: z.string().min(1).optional(),
  name: z.string().min(1).optional(),
  group: z.string().min(1).optional(),
  tags: z.array(z.string()).optional(),
  notes: z.string().optional(),
  resume: z.boolean(),
  config: z.record(z.string(), z.unknown()),
});
export type WandbInit = z.infer<typeof WandbInit>;

export const ToLogger = z.discriminatedUnion('type', [
  z.object({ type: z.literal('init'), init: WandbInit }),
  z.object({ type: z.literal('log'), seq: z.number().int().nonnegative(), step: z.number().int().nonnegative(), row: z.record(z.string(), finite) }),
  z.object({ type: z.literal('finish'), step: z.number().int().nonnegative().optional(), summary: z.record(z.string(), z.unknown()) }),
]);
export type ToLogger = z.infer<typeof ToLogger>;

export const FromLogger = z.discriminatedUnion('type', [
  z.object({ type: z.literal('started'), id: z.string(), url: z.string() }),
  /** rows up to and including seq were handed to the W&B run */
  z.object({ type: z.literal('logged'), seq: z.number().int().nonnegative() }),
  z.object({ type: z.literal('error'), reason: z.string() }),
  z.object({ type: z.literal('finished') }),
]);
export type FromLogger = z.infer<typeof FromLogger>;
