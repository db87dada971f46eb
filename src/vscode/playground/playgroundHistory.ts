// The playground's last runs in workspace state (parsed with zod when read back: the state may be
// from another version), and the text of one sample for the tinker-sample: documents.
import * as vscode from 'vscode';
import { PlaygroundForm, RunView, SideId, sourceLabel } from '../../protocol/playgroundProtocol';
import { PLAYGROUND_AUTHORITY } from './playgroundDocuments';
import { hasStructure, messageText } from '../../protocol/messageFormat';
import { SAMPLE_SCHEME } from '../samples/sampleDocuments';

const HISTORY_KEY = 'tinker.playground.history';
/** runs kept in workspace state */
export const HISTORY_LIMIT = 10;

/** A run with its samples' token ids and log-probs (kept for the token view and Copy as JSON). */
export interface StoredRun {
  view: RunView;
  tokens: Record<string, { tokens: number[]; logprobs: number[] }>;
}

export const tokenKey = (side: SideId, index: number) => `${side}:${index}`;

/** The stored runs, newest first; entries that do not parse are left out. */
export function readHistory(state: vscode.Memento): StoredRun[] {
  const raw = state.get<unknown>(HISTORY_KEY);
  if (!Array.isArray(raw)) return [];
  const out: StoredRun[] = [];
  for (const item of raw) {
    if (typeof item !== 'object' || item === null) continue;
    const view = RunView.safeParse((item as { view?: unknown }).view);
    const tokens = (item as { tokens?: unknown }).tokens;
    if (view.success && typeof tokens === 'object' && tokens !== null) out.push({ view: view.data, tokens: tokensOf(tokens) });
  }
  return out;
}

/** Stores the run first in the history; returns the history stored. */
export async function rememberRun(state: vscode.Memento, run: StoredRun): Promise<StoredRun[]> {
  const history = [run, ...readHistory(state).filter((h) => h.view.id !== run.view.id)].slice(0, HISTORY_LIMIT);
  await state.update(HISTORY_KEY, history);
  return history;
}

function tokensOf(raw: object): StoredRun['tokens'] {
  const out: StoredRun['tokens'] = {};
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v !== 'object' || v === null) continue;
    const t: unknown = (v as { tokens?: unknown }).tokens;
    const l: unknown = (v as { logprobs?: unknown }).logprobs;
    if (isNumbers(t) && isNumbers(l)) out[k] = { tokens: t, logprobs: l };
  }
  return out;
}

function isNumbers(x: unknown): x is number[] {
  return Array.isArray(x) && x.every((n) => typeof n === 'number');
}

export function describe(source: PlaygroundForm['A']): string {
  return source ? sourceLabel(source) : '(none)';
}

/** A sample as a read-only document: what produced it, then the completion. */
export function sampleDocumentText(run: RunView, side: SideId, index: number): string | undefined {
  const r = run.sides[side];
  const s = r?.samples.find((x) => x.index === index);
  if (!r || !s) return undefined;
  const f = run.form;
  return [
    `# playground · side ${side} · sample ${index}`,
    `model:       ${describe(f[side])}`,
    ...(r.info ? [`renderer:    ${r.info.renderer} (${r.info.promptTokens} prompt tokens)`] : []),
    `parameters:  temperature ${f.params.temperature}, top_p ${f.params.topP}, top_k ${f.params.topK}, max_tokens ${f.params.maxTokens}${f.params.seed !== undefined ? `, seed ${f.params.seed + index}` : ''}`,
    `stop reason: ${s.stopReason}, ${s.tokens} tokens`,
    ...(s.reward !== undefined ? [`reward:      ${s.reward}${s.rewardError ? ` (${s.rewardError.kind}: ${s.rewardError.message})` : ''}`] : []),
    '',
    '## completion',
    s.text,
    ...(s.message && hasStructure({ role: 'assistant', ...s.message }) ? ['', '## parsed reply', messageText({ role: 'assistant', ...s.message })] : []),
    '',
  ].join('\n');
}

/** longer completions are cut in the document (the URI holds the text) */
const MAX_DOC_CHARS = 64_000;

export function playgroundSampleUri(run: RunView, side: SideId, index: number): vscode.Uri {
  let text = sampleDocumentText(run, side, index);
  if (text === undefined) throw new Error(`the run has no sample ${index} on side ${side}`);
  if (text.length > MAX_DOC_CHARS) text = `${text.slice(0, MAX_DOC_CHARS)}\n… (cut at ${MAX_DOC_CHARS} characters; Copy as JSON has all of it)\n`;
  return vscode.Uri.from({ scheme: SAMPLE_SCHEME, authority: PLAYGROUND_AUTHORITY, path: `/${run.id}/${side}-sample-${index}.txt`, query: new URLSearchParams({ doc: text }).toString() });
}
