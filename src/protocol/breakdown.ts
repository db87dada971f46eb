// The GRPO group breakdown's pure logic, shared by the webview, its host, the unit tests and the
// bench: groups from sample summaries, the header's statistics, the filtered, sorted view, and the
// text search, which runs in the host over the whole texts (the webview has previews only) with each
// group's text lowered once.
import { stoppedOnItsOwn, type EpisodeTranscript, type GroupPrompt, type SampleSummary } from './sampleSchema';

/** The cookbook's split of groups by learning signal (threshold 0.5, as env/all/by_group/frac_*). */
export type GroupKind = 'mixed' | 'all-good' | 'all-bad';

export interface BreakdownGroup {
  groupIdx: number;
  problemId: string;
  /** the rendered prompt (the sample's detail) */
  prompt: string;
  /** what the group's rows show: the problem's question, else the rendered prompt */
  question: string;
  groundTruth: string;
  samples: SampleSummary[];
  kind: GroupKind;
  meanReward: number;
  /** max − min reward */
  spread: number;
  rewardErrors: number;
  truncated: number;
}

export function classify(rewards: readonly number[]): GroupKind {
  if (rewards.some((r) => r !== rewards[0])) return 'mixed';
  return (rewards[0] ?? 0) >= 0.5 ? 'all-good' : 'all-bad';
}

export function isTruncated(s: SampleSummary): boolean {
  return !stoppedOnItsOwn(s);
}

export function buildGroups(records: readonly SampleSummary[], prompts: readonly GroupPrompt[]): BreakdownGroup[] {
  const promptOf = new Map(prompts.map((p) => [p.group_idx, p]));
  const byIdx = new Map<number, SampleSummary[]>();
  for (const r of records) {
    const list = byIdx.get(r.group_idx);
    if (list) list.push(r);
    else byIdx.set(r.group_idx, [r]);
  }
  return [...byIdx.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([groupIdx, samples]) => {
      samples.sort((a, b) => a.traj_idx - b.traj_idx);
      const rewards = samples.map((s) => s.reward);
      const first = samples[0]!;
      let min = Infinity;
      let max = -Infinity;
      let sum = 0;
      for (const r of rewards) {
        min = Math.min(min, r);
        max = Math.max(max, r);
        sum += r;
      }
      return {
        groupIdx,
        problemId: first.problem_id,
        prompt: promptOf.get(groupIdx)?.prompt ?? '',
        question: promptOf.get(groupIdx)?.question ?? promptOf.get(groupIdx)?.prompt ?? '',
        groundTruth: first.ground_truth,
        samples,
        kind: classify(rewards),
        meanReward: sum / samples.length,
        spread: max - min,
        rewardErrors: samples.filter((s) => s.reward_error).length,
        truncated: samples.filter(isTruncated).length,
      };
    });
}

export interface BreakdownStats {
  groups: number;
  samples: number;
  counts: Record<GroupKind, number>;
  /** counts of rewards in HISTOGRAM_BINS equal bins over [min, max] of the iteration */
  histogram: { min: number; max: number; bins: number[] };
  truncatedFraction: number;
  rewardErrors: number;
  meanTokens: number;
}

export const HISTOGRAM_BINS = 10;

export function breakdownStats(groups: readonly BreakdownGroup[]): BreakdownStats {
  const counts: Record<GroupKind, number> = { mixed: 0, 'all-good': 0, 'all-bad': 0 };
  let samples = 0;
  let truncated = 0;
  let errors = 0;
  let tokens = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const g of groups) {
    counts[g.kind]++;
    truncated += g.truncated;
    errors += g.rewardErrors;
    for (const s of g.samples) {
      samples++;
      tokens += s.token_count;
      min = Math.min(min, s.reward);
      max = Math.max(max, s.reward);
    }
  }
  const bins = new Array<number>(HISTOGRAM_BINS).fill(0);
  if (samples > 0) {
    const width = max - min;
    for (const g of groups) {
      for (const s of g.samples) {
        const b = width > 0 ? Math.min(HISTOGRAM_BINS - 1, Math.floor(((s.reward - min) / width) * HISTOGRAM_BINS)) : 0;
        bins[b]!++;
      }
    }
  }
  return {
    groups: groups.length,
    samples,
    counts,
    histogram: { min: samples ? min : 0, max: samples ? max : 0, bins },
    truncatedFraction: samples ? truncated / samples : 0,
    rewardErrors: errors,
    meanTokens: samples ? tokens / samples : 0,
  };
}

export interface GroupFilter {
  /** the kinds shown; empty shows every kind */
  kinds: GroupKind[];
  rewardError: boolean;
  truncated: boolean;
  text: string;
}

export type GroupSort = 'index' | 'reward-desc' | 'reward-asc' | 'spread-desc' | 'errors-desc';

export const NO_FILTER: GroupFilter = { kinds: [], rewardError: false, truncated: false, text: '' };

/**
 * The positions in `groups` to show, in order. `matches`: the group indices the host found for
 * `filter.text` (searchGroups); without it the text does not filter (the answer is on its way).
 */
export function viewGroups(groups: readonly BreakdownGroup[], filter: GroupFilter, sort: GroupSort, matches?: ReadonlySet<number>): number[] {
  const text = filter.text.trim() !== '' ? matches : undefined;
  const kinds = filter.kinds.length ? new Set(filter.kinds) : undefined;
  const shown: number[] = [];
  for (let i = 0; i < groups.length; i++) {
    const g = groups[i]!;
    if (kinds && !kinds.has(g.kind)) continue;
    if (filter.rewardError && g.rewardErrors === 0) continue;
    if (filter.truncated && g.truncated === 0) continue;
    if (text && !text.has(g.groupIdx)) continue;
    shown.push(i);
  }
  const by = (key: (g: BreakdownGroup) => number, dir: 1 | -1) => shown.sort((a, b) => dir * (key(groups[a]!) - key(groups[b]!)) || a - b);
  switch (sort) {
    case 'reward-desc':
      return by((g) => g.meanReward, -1);
    case 'reward-asc':
      return by((g) => g.meanReward, 1);
    case 'spread-desc':
      return by((g) => g.spread, -1);
    case 'errors-desc':
      return by((g) => g.rewardErrors, -1);
    default:
      return shown;
  }
}

/** The best and the worst sample of a group by reward (first of equals). */
export function bestAndWorst(g: BreakdownGroup): { best: SampleSummary; worst: SampleSummary } {
  let best = g.samples[0]!;
  let worst = g.samples[0]!;
  for (const s of g.samples) {
    if (s.reward > best.reward) best = s;
    if (s.reward < worst.reward) worst = s;
  }
  return { best, worst };
}

/** Each group's prompt and completions (an episode: every message of its transcript), lower-cased once, for searchGroups. */
export type SearchIndex = ReadonlyArray<{ groupIdx: number; text: string }>;

/** The text of an episode a search looks in: every message the environment showed and every reply. */
function transcriptSearchText(t: EpisodeTranscript): string {
  const out: string[] = [];
  for (const turn of t.turns) {
    for (const m of turn.new_messages) out.push(m.content);
    out.push(turn.reply.content, ...(turn.reply.tool_calls ?? []).map((c) => `${c.function.name} ${c.function.arguments}`), ...(turn.reply.unparsed_tool_calls ?? []).map((u) => u.raw_text));
  }
  return out.join('\n');
}

export function searchIndex(records: ReadonlyArray<{ group_idx: number; prompt: string; completion: string; transcript?: EpisodeTranscript | undefined }>): SearchIndex {
  const parts = new Map<number, string[]>();
  for (const r of records) {
    const text = r.transcript ? transcriptSearchText(r.transcript) : r.completion;
    const list = parts.get(r.group_idx);
    if (list) list.push(text);
    else parts.set(r.group_idx, [r.prompt, text]);
  }
  return [...parts].sort((a, b) => a[0] - b[0]).map(([groupIdx, texts]) => ({ groupIdx, text: texts.join('\n').toLowerCase() }));
}

/** The groups whose prompt or a completion contains `text` (case-insensitive), ascending. */
export function searchGroups(index: SearchIndex, text: string): number[] {
  const needle = text.trim().toLowerCase();
  if (!needle) return index.map((g) => g.groupIdx);
  const out: number[] = [];
  for (const g of index) if (g.text.includes(needle)) out.push(g.groupIdx);
  return out;
}
