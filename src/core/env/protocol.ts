// The environment worker protocol (the parent's side), and the shapes user code must return, parsed
// with zod at the edge: whatever a worker sends is checked here before the loop uses it.
//   initial_observation() → a list of messages, or {"messages": [...], "tools": [...]}
//   step(message)          → {"reward", "episode_done", "next_messages", "metrics"?, "logs"?}
//                            (the cookbook's MessageStepResult; JS may write episodeDone/nextMessages)
//   compute_group_rewards(problems, transcripts) → one (reward, metrics) per episode: a pair
//                            [reward, {metrics}] or {"reward", "metrics"}
import * as z from 'zod';
import { ChatMessage, ToolSpec } from '../../protocol/chatMessage';
import { MAX_ERROR_MESSAGE_CHARS, MAX_RAW_CHARS, MAX_TRACEBACK_CHARS } from '../reward/protocol';

export type EnvToWorker =
  | { type: 'load'; file: string; source: string; format: 'python' | 'commonjs' | 'module'; memoryMb: number; className?: string | undefined }
  | { type: 'call'; id: number; op: 'create'; instance: number; problem: unknown }
  | { type: 'call'; id: number; op: 'initial' | 'drop'; instance: number }
  | { type: 'call'; id: number; op: 'step'; instance: number; message: ChatMessage }
  | { type: 'call'; id: number; op: 'group'; problems: unknown[]; transcripts: ChatMessage[][] };

const location = {
  message: z.string().max(MAX_ERROR_MESSAGE_CHARS),
  traceback: z.string().max(MAX_TRACEBACK_CHARS).optional(),
  line: z.number().int().positive().optional(),
  column: z.number().int().positive().optional(),
};

export const EnvFromWorker = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready'), className: z.string(), groupRewards: z.boolean() }),
  z.object({ type: z.literal('load_error'), ...location }),
  z.object({ type: z.literal('result'), id: z.number().int().nonnegative(), value: z.unknown(), durationMs: z.number().nonnegative() }),
  z.object({
    type: z.literal('failure'),
    id: z.number().int().nonnegative(),
    kind: z.enum(['exception', 'invalid_result', 'crash']),
    ...location,
    raw: z.string().max(MAX_RAW_CHARS).optional(),
    durationMs: z.number().nonnegative(),
  }),
]);
export type EnvFromWorker = z.infer<typeof EnvFromWorker>;

/** A metric value: a finite number (a boolean counts as 1 or 0). */
const MetricValue = z.preprocess((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v), z.number().finite());
export const EnvMetrics = z.record(z.string().min(1), MetricValue);
const Logs = z.record(z.string(), z.union([z.string(), z.number()]));

export const InitialObservation = z.union([
  z.array(ChatMessage).min(1, { message: 'the conversation is empty' }),
  z.strictObject({ messages: z.array(ChatMessage).min(1, { message: 'the conversation is empty' }), tools: z.array(ToolSpec).optional() }),
]);
export type InitialObservation = { messages: ChatMessage[]; tools?: ToolSpec[] };

/** The cookbook's MessageStepResult (next_stop_condition is not taken: the renderer's stop condition is used). */
export const StepResult = z.preprocess(
  (v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const o = { ...(v as Record<string, unknown>) };
    if ('episodeDone' in o && !('episode_done' in o)) o.episode_done = o.episodeDone;
    if ('nextMessages' in o && !('next_messages' in o)) o.next_messages = o.nextMessages;
    delete o.episodeDone;
    delete o.nextMessages;
    if (o.next_stop_condition === null) delete o.next_stop_condition;
    return o;
  },
  z
    .strictObject({
      reward: z.number().finite(),
      episode_done: z.boolean(),
      next_messages: z.array(ChatMessage).optional(),
      metrics: EnvMetrics.optional(),
      logs: Logs.optional(),
    })
    .refine((r) => r.episode_done || (r.next_messages !== undefined && r.next_messages.length > 0), { message: 'next_messages is required while the episode goes on (episode_done false)', path: ['next_messages'] }),
);
export type StepResult = { reward: number; episode_done: boolean; next_messages?: ChatMessage[]; metrics?: Record<string, number>; logs?: Record<string, string | number> };

const GroupReward = z.union([
  z.tuple([z.number().finite(), EnvMetrics.optional()]).transform(([reward, metrics]) => ({ reward, metrics: metrics ?? {} })),
  z.strictObject({ reward: z.number().finite(), metrics: EnvMetrics.optional() }).transform((r) => ({ reward: r.reward, metrics: r.metrics ?? {} })),
  z.number().finite().transform((reward) => ({ reward, metrics: {} as Record<string, number> })),
]);
export const GroupRewards = z.array(GroupReward);
export type GroupReward = { reward: number; metrics: Record<string, number> };

/** The first problem of a zod error, as "<where>: <what>", for an invalid_result message. */
export function shapeProblem(what: string, error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return `${what} returned a value of the wrong shape`;
  const where = issue.path.length ? ` (at ${issue.path.map(String).join('.')})` : '';
  return `${what} returned a value of the wrong shape${where}: ${issue.message}`;
}
