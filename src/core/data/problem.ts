// One record (a JSONL line or a dataset row) → a problem: the prompt conversation and the ground
// truth, checked field by field so a bad record is reported with what is wrong in it.
import * as z from 'zod';
import { ChatMessage, cleanMessage } from '../../protocol/chatMessage';
import { RendererError } from '../render/errors';
import type { Message, Renderer } from '../render/types';
import { formatIssue } from '../spec/issues';
import type { Problem } from './types';

/** A dataset that cannot be used; the message names the file and line (or row) and the field. */
export class DatasetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatasetError';
  }
}

export interface ProblemFields {
  promptField: string;
  groundTruthField: string;
  systemPrompt?: string;
  /** prompt-only data (a distillation run without a reward): a record without a ground truth gets "" */
  groundTruthOptional?: boolean;
  /**
   * an environment run: every JSON object is a problem, kept whole in `row` for the environment's
   * constructor; its prompt and ground truth fields are read when present (records, the playground)
   */
  environment?: boolean;
}

/**
 * A chat list as a prompt: the messages of src/protocol/chatMessage.ts (reasoning, tool calls, tool
 * results with their call id); it must end with the turn the model answers: a user message, or a
 * tool result (the model continues after its call). The run's renderer renders it, and refuses what
 * its model family cannot express (see renderedPrompt).
 */
const ChatList = z
  .array(ChatMessage)
  .min(1)
  .refine((m) => m.at(-1)?.role === 'user' || m.at(-1)?.role === 'tool', { message: 'must end with a user message or a tool result (the model answers it)' });

/**
 * A problem's generation prompt through `renderer`; a conversation the renderer cannot render
 * (reasoning or tool calls for a family without them) fails naming the problem and what to do.
 */
export function renderedPrompt(renderer: Renderer, problem: Pick<Problem, 'id' | 'messages'>): number[] {
  try {
    return renderer.buildGenerationPrompt(problem.messages);
  } catch (err) {
    if (err instanceof RendererError) throw new DatasetError(`problem ${problem.id}: ${err.message}`);
    throw err;
  }
}

const GroundTruth = z.union([z.string(), z.number().refine(Number.isFinite)]);

export type RecordResult = { ok: true; problem: Problem } | { ok: false; reason: string };

/** The system prompt (if any) and then the question, or the record's own conversation. */
export function problemToMessages(prompt: string | readonly Message[], systemPrompt?: string): Message[] {
  const convo: Message[] = typeof prompt === 'string' ? [{ role: 'user', content: prompt }] : prompt.map((m) => ({ ...m }));
  // a conversation that brings its own system message keeps it
  if (systemPrompt === undefined || convo[0]?.role === 'system') return convo;
  return [{ role: 'system', content: systemPrompt }, ...convo];
}

/** Reads one record; `reason` says what is wrong with it in terms of its fields. */
export function recordToProblem(record: unknown, fields: ProblemFields, id: string): RecordResult {
  if (typeof record !== 'object' || record === null || Array.isArray(record))
    return { ok: false, reason: `expected a JSON object, got ${Array.isArray(record) ? 'a list' : record === null ? 'null' : typeof record}` };
  const rec = new Map(Object.entries(record));
  const { promptField, groundTruthField } = fields;
  if (fields.environment) {
    const read = recordToProblem(record, { promptField, groundTruthField, groundTruthOptional: true, ...(fields.systemPrompt !== undefined ? { systemPrompt: fields.systemPrompt } : {}) }, id);
    const truth = rec.get(groundTruthField);
    const row = record as Record<string, unknown>;
    if (read.ok) return { ok: true, problem: { ...read.problem, row } };
    return { ok: true, problem: { id, messages: [], groundTruth: typeof truth === 'string' || typeof truth === 'number' ? String(truth) : '', row } };
  }

  const promptKey = rec.has(promptField) ? promptField : rec.has('messages') ? 'messages' : undefined;
  if (promptKey === undefined)
    return { ok: false, reason: `missing field "${promptField}"${promptField === 'messages' ? '' : ' (or a "messages" chat list)'}` };
  const promptValue = rec.get(promptKey);
  let prompt: string | Message[];
  if (typeof promptValue === 'string') {
    if (promptValue.trim() === '') return { ok: false, reason: `field "${promptKey}" is empty` };
    prompt = promptValue;
  } else if (Array.isArray(promptValue)) {
    const chat = ChatList.safeParse(promptValue, { reportInput: true });
    if (!chat.success) return { ok: false, reason: `field "${promptKey}"${formatIssue(chat.error.issues[0]!).replace(/^\(top level\)/, '')}` };
    prompt = chat.data.map(cleanMessage);
  } else {
    return { ok: false, reason: `field "${promptKey}" must be a string or a chat list [{role, content}, …], not ${kindOf(promptValue)}` };
  }

  if (!rec.has(groundTruthField) && fields.groundTruthOptional) return { ok: true, problem: { id, messages: problemToMessages(prompt, fields.systemPrompt), groundTruth: '' } };
  if (!rec.has(groundTruthField)) return { ok: false, reason: `missing field "${groundTruthField}"` };
  const truth = GroundTruth.safeParse(rec.get(groundTruthField));
  if (!truth.success) return { ok: false, reason: `field "${groundTruthField}" must be a string or a number, not ${kindOf(rec.get(groundTruthField))}` };

  return { ok: true, problem: { id, messages: problemToMessages(prompt, fields.systemPrompt), groundTruth: String(truth.data) } };
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return `a ${typeof v}`;
}
