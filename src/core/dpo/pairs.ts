// Preference pairs: a prompt (a chat) and two completions, one preferred. Two JSONL formats, one pair a
// line, told apart by their fields:
//   - Tinker Studio's: {"prompt": "…" | "messages": [chat], "chosen": C, "rejected": C, …} with C a
//     string (the assistant's text) or an assistant message {role: "assistant", content, tool_calls?…};
//   - the cookbook's LabeledComparison: {"comparison": {"prompt_conversation": [chat], "completion_A": M,
//     "completion_B": M}, "label": "A" | "B"} with M a list of messages (or one message, or a string).
// A tie (label "Tie") names no preferred completion: it is refused with its line (the cookbook silently
// trains a tie as "B preferred"; Tinker Studio does not guess). Other fields of a line (provenance …)
// are kept as the pair's `meta`. Bad lines are named by line and left out (or stop the run, by policy);
// the good ones are kept.
import * as z from 'zod';
import { ChatMessage, cleanMessage } from '../../protocol/chatMessage';
import type { Message } from '../render/types';
import { formatIssue } from '../spec/issues';
import { errorMessage } from '../errors';

export interface PreferencePair {
  /** "<file>:<line>" */
  id: string;
  /** the conversation before the completions */
  prompt: Message[];
  chosen: Message[];
  rejected: Message[];
  /** the line's other fields (provenance, rewards …) */
  meta?: Record<string, unknown>;
}

const Completion = z.union([
  z.string().transform((content): ChatMessage[] => [{ role: 'assistant', content }]),
  ChatMessage.transform((m) => [m]),
  z.array(ChatMessage).min(1, 'is an empty list of messages'),
]);

const Chat = z.array(ChatMessage).min(1, 'is an empty chat');

const StudioPair = z.looseObject({
  prompt: z.string().optional(),
  messages: Chat.optional(),
  chosen: Completion,
  rejected: Completion,
});

const Label = z.union([z.enum(['A', 'B']), z.literal('Tie')]);

const CookbookComparison = z.looseObject({
  comparison: z.looseObject({
    prompt_conversation: Chat,
    completion_A: Completion,
    completion_B: Completion,
  }),
  label: Label,
});

export const TIE_REASON =
  'label "Tie": a tie prefers neither completion, so it cannot train DPO; label it "A" or "B" or remove the line (the cookbook trains a tie as "B preferred"; Tinker Studio refuses to guess)';

function firstIssue(err: z.ZodError, prefix: (string | number)[] = []): string {
  const issue = err.issues[0]!;
  return formatIssue({ ...issue, path: [...prefix, ...issue.path] });
}

function checkCompletion(ms: ChatMessage[], field: string): string | undefined {
  const bad = ms.findIndex((m) => m.role !== 'assistant' && m.role !== 'tool');
  if (bad >= 0) return `${field}: message ${bad} has role "${ms[bad]!.role}"; a completion is assistant (and tool) messages`;
  if (ms[0]!.role !== 'assistant') return `${field}: a completion starts with an assistant message`;
  return undefined;
}

const same = (a: readonly Message[], b: readonly Message[]) => JSON.stringify(a) === JSON.stringify(b);

/** One parsed JSON line → a pair, or why it is not one. */
export function recordToPair(value: unknown, id: string): { ok: true; pair: PreferencePair } | { ok: false; reason: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, reason: 'not a JSON object' };
  const rec = value as Record<string, unknown>;
  let prompt: ChatMessage[];
  let chosen: ChatMessage[];
  let rejected: ChatMessage[];
  let meta: Record<string, unknown>;
  if ('comparison' in rec || 'label' in rec) {
    const r = CookbookComparison.safeParse(rec);
    if (!r.success) return { ok: false, reason: firstIssue(r.error) };
    if (r.data.label === 'Tie') return { ok: false, reason: TIE_REASON };
    const { prompt_conversation, completion_A, completion_B, ...restC } = r.data.comparison;
    prompt = prompt_conversation;
    [chosen, rejected] = r.data.label === 'A' ? [completion_A, completion_B] : [completion_B, completion_A];
    const { comparison: _c, label, ...rest } = r.data;
    meta = { ...rest, ...(Object.keys(restC).length ? { comparison: restC } : {}), label };
  } else {
    const r = StudioPair.safeParse(rec);
    if (!r.success) return { ok: false, reason: firstIssue(r.error) };
    const { prompt: p, messages, chosen: c, rejected: x, ...rest } = r.data;
    if ((p === undefined) === (messages === undefined)) return { ok: false, reason: 'needs exactly one of "prompt" (a string) and "messages" (a chat list), and "chosen" and "rejected"' };
    prompt = messages ?? [{ role: 'user', content: p! }];
    chosen = c;
    rejected = x;
    meta = rest;
  }
  if (prompt[prompt.length - 1]!.role === 'assistant') return { ok: false, reason: 'the prompt ends with an assistant message: the completions follow it' };
  for (const [ms, field] of [
    [chosen, 'chosen'],
    [rejected, 'rejected'],
  ] as const) {
    const why = checkCompletion(ms, field);
    if (why) return { ok: false, reason: why };
  }
  const pair: PreferencePair = { id, prompt: prompt.map(cleanMessage), chosen: chosen.map(cleanMessage), rejected: rejected.map(cleanMessage) };
  if (same(pair.chosen, pair.rejected)) return { ok: false, reason: 'chosen and rejected are the same completion: the pair teaches nothing' };
  if (Object.keys(meta).length) pair.meta = meta;
  return { ok: true, pair };
}

export interface ParsedPairs {
  pairs: PreferencePair[];
  skipped: Array<{ where: string; reason: string }>;
}

/** The pairs of a JSONL text; each bad line is named `<label>:<line>` with its reason. */
export function parsePairsText(text: string, label: string): ParsedPairs {
  const pairs: PreferencePair[] = [];
  const skipped: ParsedPairs['skipped'] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    const where = `${label}:${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      skipped.push({ where, reason: `invalid JSON: ${errorMessage(err)}` });
      return;
    }
    const r = recordToPair(value, where);
    if (r.ok) pairs.push(r.pair);
    else skipped.push({ where, reason: r.reason });
  });
  return { pairs, skipped };
}

/** A pair as a line of Tinker Studio's format (what the playground and "Make Preference Pairs" write). */
export function pairToLine(p: { prompt: readonly Message[]; chosen: readonly Message[]; rejected: readonly Message[]; meta?: Record<string, unknown> }): string {
  const completion = (ms: readonly Message[]) => (ms.length === 1 && Object.keys(ms[0]!).length === 2 && ms[0]!.role === 'assistant' ? ms[0]!.content : ms.length === 1 ? ms[0] : ms);
  const prompt = p.prompt.length === 1 && p.prompt[0]!.role === 'user' && Object.keys(p.prompt[0]!).length === 2 ? { prompt: p.prompt[0]!.content } : { messages: p.prompt };
  return JSON.stringify({ ...prompt, chosen: completion(p.chosen), rejected: completion(p.rejected), ...(p.meta ?? {}) });
}

export interface PairSplit {
  train: PreferencePair[];
  validation: PreferencePair[];
  skipped: ParsedPairs['skipped'];
}

/** A pairs file read with its bad lines named; under "stop" the first bad line fails the read. */
export async function readPairsFile(file: string, label: string, policy: 'skip' | 'stop'): Promise<ParsedPairs> {
  const { readDatasetText } = await import('../data/jsonl');
  const { DatasetError } = await import('../data/problem');
  const parsed = parsePairsText(await readDatasetText(file, label), label);
  if (policy === 'stop' && parsed.skipped.length > 0) {
    const s = parsed.skipped[0]!;
    throw new DatasetError(`${s.where}: ${s.reason}${parsed.skipped.length > 1 ? ` (and ${parsed.skipped.length - 1} more bad lines)` : ''} (set dataset.on_invalid_line to "skip" to leave such lines out)`);
  }
  return parsed;
}
