// The messages between the Preference Pairs panel (webview/pairs) and its host
// (src/vscode/dpo/pairsPanel.ts), inside the envelope of panelProtocol.ts. The host sends a snapshot
// of the pairs of a file or of a DPO run (prompt, chosen, rejected, and for a run each pair's implicit
// reward margin β·(ρ_chosen − ρ_rejected) when it was first measured and now), then `margins` as the
// run's steps write more. Sorting and filtering are pure functions here, run by the webview.
import * as z from 'zod';
import type { PanelProtocol } from './panelProtocol';

export const PairRow = z.object({
  /** "<file>:<line>" */
  id: z.string(),
  prompt: z.string(),
  chosen: z.string(),
  rejected: z.string(),
  split: z.enum(['train', 'validation']).optional(),
  /** the margin the first time the run measured the pair (before that step's update), null: never measured */
  start: z.number().nullable(),
  /** the margin the last time it was measured */
  now: z.number().nullable(),
  /** the step of `now` */
  step: z.number().int().nullable(),
});
export type PairRow = z.infer<typeof PairRow>;

export const MarginUpdate = z.object({ id: z.string(), split: z.enum(['train', 'validation']), start: z.number(), now: z.number(), step: z.number().int() });
export type MarginUpdate = z.infer<typeof MarginUpdate>;

export const PairsSnapshot = z.object({
  type: z.literal('snapshot'),
  /** the panel's title: the file's or the run's name */
  title: z.string(),
  /** what the pairs come from: the file, or the run directory and its pairs file */
  source: z.object({ kind: z.enum(['file', 'run']), path: z.string(), pairsFile: z.string() }),
  beta: z.number().optional(),
  running: z.boolean(),
  pairs: z.array(PairRow),
  /** lines of the file that are not pairs (named in the log) */
  skipped: z.array(z.object({ where: z.string(), reason: z.string() })),
});
export type PairsSnapshot = z.infer<typeof PairsSnapshot>;

export const ToWebview = z.discriminatedUnion('type', [
  PairsSnapshot,
  /** margins the run wrote since the last message */
  z.object({ type: z.literal('margins'), updates: z.array(MarginUpdate), running: z.boolean() }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type ToWebview = z.infer<typeof ToWebview>;

export const FromWebview = z.discriminatedUnion('type', [
  /** the pair's chosen and rejected completions in the native diff editor */
  z.object({ type: z.literal('diff'), id: z.string().max(5000) }),
  /** the pairs file in an editor, at the pair's line when given */
  z.object({ type: z.literal('openFile'), id: z.string().max(5000).optional() }),
  z.object({ type: z.literal('webviewError'), message: z.string().max(4000) }),
]);
export type FromWebview = z.infer<typeof FromWebview>;

export const PairsRequests = {};

export const PairsPanelState = z.object({ kind: z.literal('pairs'), source: z.string() });
export type PairsPanelState = z.infer<typeof PairsPanelState>;

export const PairsProtocol = {
  toWebview: ToWebview,
  fromWebview: FromWebview,
  requests: PairsRequests,
  state: PairsPanelState,
} satisfies PanelProtocol;

export type PairSort = 'misranked' | 'margin-desc' | 'change' | 'file';

/** Applies margin updates to the rows (by id): `start` is kept from the first measurement, `now` follows the latest step. */
export function applyMargins(rows: PairRow[], updates: readonly MarginUpdate[]): void {
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const u of updates) {
    const r = byId.get(u.id);
    if (!r) continue;
    if (r.start === null) r.start = u.start;
    if (r.step === null || u.step >= r.step) {
      r.now = u.now;
      r.step = u.step;
    }
    r.split ??= u.split;
  }
}

/** The line number of an id "<file>:<line>" (for the file order), or Infinity. */
function lineOf(id: string): number {
  const m = /:(\d+)$/.exec(id);
  return m ? Number(m[1]) : Infinity;
}

/**
 * The rows to show: those whose prompt, chosen or rejected text (or id) contains every word of the
 * filter (case-insensitive), in the order asked. "misranked": pairs the model ranks the wrong way now
 * (margin < 0) first, most wrong first, then the rest by margin ascending, never-measured last;
 * "margin-desc": best ranked first; "change": the largest gain since the start first; "file": the
 * file's order.
 */
export function orderPairs(rows: readonly PairRow[], sort: PairSort, filter: string): PairRow[] {
  const words = filter.toLowerCase().split(/\s+/).filter((w) => w.length > 0);
  const kept = words.length === 0 ? [...rows] : rows.filter((r) => {
    const hay = `${r.id}\n${r.prompt}\n${r.chosen}\n${r.rejected}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  });
  const measured = (r: PairRow) => r.now !== null;
  const byFile = (a: PairRow, b: PairRow) => lineOf(a.id) - lineOf(b.id) || a.id.localeCompare(b.id);
  const cmp: Record<PairSort, (a: PairRow, b: PairRow) => number> = {
    misranked: (a, b) => Number(!measured(a)) - Number(!measured(b)) || (a.now ?? 0) - (b.now ?? 0) || byFile(a, b),
    'margin-desc': (a, b) => Number(!measured(a)) - Number(!measured(b)) || (b.now ?? 0) - (a.now ?? 0) || byFile(a, b),
    change: (a, b) => Number(!measured(a)) - Number(!measured(b)) || ((b.now ?? 0) - (b.start ?? 0)) - ((a.now ?? 0) - (a.start ?? 0)) || byFile(a, b),
    file: byFile,
  };
  return kept.sort(cmp[sort]);
}

/** Counts for the header: pairs, measured, mis-ranked now (margin < 0). */
export function pairCounts(rows: readonly PairRow[]): { total: number; measured: number; misranked: number } {
  let measured = 0;
  let misranked = 0;
  for (const r of rows) {
    if (r.now === null) continue;
    measured++;
    if (r.now < 0) misranked++;
  }
  return { total: rows.length, measured, misranked };
}
