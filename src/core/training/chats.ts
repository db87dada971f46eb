// The chats of an SFT run (and of inline evaluators): records from a JSONL file or a Hugging Face
// dataset, each a `messages` chat or prompt/completion fields, split into train and validation by the seed:
//   - validation from a file: train = the dataset; validation = that file;
//   - validation as a fraction: the dataset shuffled once by `seed`, the first round(fraction·n) chats
//     the validation set, the rest (in file order) the train set.
// The batches of each step are batches.ts's.
import * as path from 'node:path';
import * as z from 'zod';
import { fetchHfRows } from '../data/hf';
import { readDatasetText } from '../data/jsonl';
import { DatasetError } from '../data/problem';
import type { Message } from '../render/types';
import { ChatMessage, cleanMessage } from '../../protocol/chatMessage';
import type { NetworkOptions } from '../tinker/proxy';
import { formatIssue } from '../spec/issues';
import type { SftDatasetSpec } from '../spec/datasets';
import { errorMessage } from '../errors';
import { splitValidation } from './batches';

export interface Chat {
  /** "<file>:<line>" or "<dataset>/<config>/<split>:<row>" */
  id: string;
  messages: Message[];
}

export interface ChatSplit {
  train: Chat[];
  validation: Chat[];
  skipped: Array<{ where: string; reason: string }>;
}

const ChatMessages = z
  .array(ChatMessage)
  .min(1)
  .refine((m) => m.some((x) => x.role === 'assistant'), { message: 'has no assistant message to train on' });

export interface ChatFields {
  messagesField: string;
  promptField: string;
  completionField: string;
  systemPrompt?: string;
}

export function fieldsOf(d: SftDatasetSpec): ChatFields {
  return {
    messagesField: d.messages_field,
    promptField: d.prompt_field,
    completionField: d.completion_field,
    ...(d.system_prompt !== undefined ? { systemPrompt: d.system_prompt } : {}),
  };
}

/** One record → a chat, or why it is not one (in terms of its fields). */
export function recordToChat(value: unknown, f: ChatFields, where: string): { ok: true; chat: Chat } | { ok: false; reason: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, reason: 'not a JSON object' };
  const rec = value as Record<string, unknown>;
  let messages: Message[];
  if (rec[f.messagesField] !== undefined) {
    const r = ChatMessages.safeParse(rec[f.messagesField]);
    if (!r.success) return { ok: false, reason: formatIssue({ ...r.error.issues[0]!, path: [f.messagesField, ...r.error.issues[0]!.path] }) };
    messages = r.data.map(cleanMessage);
  } else {
    const p = rec[f.promptField];
    const c = rec[f.completionField];
    if (typeof p !== 'string' || typeof c !== 'string')
      return { ok: false, reason: `needs "${f.messagesField}" (a chat list) or the strings "${f.promptField}" and "${f.completionField}"` };
    messages = [
      { role: 'user', content: p },
      { role: 'assistant', content: c },
    ];
  }
  if (f.systemPrompt !== undefined && messages[0]!.role !== 'system') messages = [{ role: 'system', content: f.systemPrompt }, ...messages];
  return { ok: true, chat: { id: where, messages } };
}

type Loaded = { chats: Chat[]; skipped: ChatSplit['skipped'] };

async function readJsonlChats(file: string, label: string, f: ChatFields, policy: 'skip' | 'stop'): Promise<Loaded> {
  const text = await readDatasetText(file, label);
  const chats: Chat[] = [];
  const skipped: Loaded['skipped'] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    const where = `${label}:${i + 1}`;
    let reason: string;
    try {
      const r = recordToChat(JSON.parse(line), f, where);
      if (r.ok) {
        chats.push(r.chat);
        return;
      }
      reason = r.reason;
    } catch (err) {
      reason = `invalid JSON: ${errorMessage(err)}`;
    }
    if (policy === 'stop') throw new DatasetError(`${where}: ${reason} (set dataset.on_invalid_line to "skip" to leave such lines out)`);
    skipped.push({ where, reason });
  });
  return { chats, skipped };
}

export interface LoadChatsOptions {
  specDir: string;
  seed: number;
  cacheDir: string;
  /** how the datasets-server is reached (proxy …); default: the environment */
  network?: NetworkOptions;
  signal?: AbortSignal;
}

function labelOf(file: string, specDir: string): string {
  const rel = path.relative(specDir, path.resolve(specDir, file));
  return rel.startsWith('..') || path.isAbsolute(rel) ? path.resolve(specDir, file) : rel.split(path.sep).join('/');
}

export async function loadChats(d: SftDatasetSpec, o: LoadChatsOptions): Promise<ChatSplit> {
  const f = fieldsOf(d);
  let main: Loaded;
  if (d.path !== undefined) main = await readJsonlChats(path.resolve(o.specDir, d.path), labelOf(d.path, o.specDir), f, d.on_invalid_line);
  else if (d.hf !== undefined) {
    const { rows, config } = await fetchHfRows(d.hf, { cacheDir: o.cacheDir, ...(o.network ? { network: o.network } : {}), ...(o.signal ? { signal: o.signal } : {}) });
    main = { chats: [], skipped: [] };
    for (const { rowIdx, row } of rows) {
      const where = `${d.hf.dataset}/${config}/${d.hf.split}:${rowIdx}`;
      const r = recordToChat(row, f, where);
      if (r.ok) main.chats.push(r.chat);
      else if (d.on_invalid_line === 'stop') throw new DatasetError(`${where}: ${r.reason} (set dataset.on_invalid_line to "skip" to leave such rows out)`);
      else main.skipped.push({ where, reason: r.reason });
    }
  } else throw new DatasetError('dataset: give "path" (a JSONL file) or "hf" (a Hugging Face dataset)');

  const skipped = [...main.skipped];
  let train = main.chats;
  let validation: Chat[] = [];
  const v = d.validation;
  if (v?.path !== undefined) {
    const loaded = await readJsonlChats(path.resolve(o.specDir, v.path), labelOf(v.path, o.specDir), f, d.on_invalid_line);
    for (const x of loaded.skipped) skipped.push(x);
    if (loaded.chats.length === 0) throw new DatasetError(`dataset.validation.path: ${labelOf(v.path, o.specDir)} has no chats`);
    validation = loaded.chats;
  } else if (v?.fraction !== undefined) {
    const split = splitValidation(main.chats, v.fraction, o.seed);
    train = split.train;
    validation = split.validation;
  }
  if (train.length === 0) throw new DatasetError(main.chats.length === 0 ? `dataset: no chats${skipped.length ? ` (${skipped.length} skipped; first: ${skipped[0]!.where}: ${skipped[0]!.reason})` : ''}` : 'dataset: no training chats are left after the validation split');
  return { train, validation, skipped };
}
