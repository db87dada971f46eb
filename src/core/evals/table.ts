// An eval's summary as compact text: the targets × metrics table with 95 % intervals, the paired
// comparisons with the baseline, and the problems a target regressed on. The CLI prints it and the
// agent tools (evaluate, eval_status) return it. An NLL eval's table has the NLL per token (lower is
// better) and its paired difference instead of the sampling metrics.
import type { Estimate, EvalSummary, ProblemRow, TargetSummary } from './results';
import { compareWithTolerance } from './stats';

function fmt(x: number, digits: number): string {
  return Number.isFinite(x) ? x.toFixed(digits) : '—';
}

/** "0.512 [0.480, 0.545]" */
export function formatEstimate(e: Estimate | undefined, digits = 3): string {
  if (!e) return '—';
  return e.lo !== undefined && e.hi !== undefined ? `${fmt(e.value, digits)} [${fmt(e.lo, digits)}, ${fmt(e.hi, digits)}]` : fmt(e.value, digits);
}

function pad(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ').trimEnd()).join('\n');
}

function fmtP(p: number): string {
  return p < 0.001 ? '<0.001' : p.toFixed(3);
}

/** Samples that failed in the grader or environment (they score 0), of all samples, over every target. */
export function failedSamples(s: Pick<EvalSummary, 'targets'>): { failed: number; samples: number } {
  return { failed: s.targets.reduce((k, t) => k + t.reward_errors, 0), samples: s.targets.reduce((k, t) => k + t.samples, 0) };
}

/** One target's failures in a line: "40 of 40 samples failed in the grader and scored 0; first (problem, sample 0): reward.py:3: TypeError: …". */
export function failureLine(s: Pick<EvalSummary, 'grading'>, t: TargetSummary): string | undefined {
  if (t.reward_errors === 0) return undefined;
  const e = t.first_error;
  return `${t.reward_errors} of ${t.samples} samples failed in the ${s.grading ?? 'grader'} and scored 0${e ? `; first (${e.problem_id}, sample ${e.traj_idx}): ${e.at}: ${e.kind}: ${e.message}` : ''}`;
}

/** An eval whose grader or environment failed on every sample measured nothing: why, else undefined. */
export function everySampleFailed(s: EvalSummary): string | undefined {
  const { failed, samples } = failedSamples(s);
  if (samples === 0 || failed < samples) return undefined;
  const e = s.targets.find((t) => t.first_error)?.first_error;
  return `every sample (${failed} of ${samples}) failed in the ${s.grading ?? 'grader'}: the figures measure nothing${e ? `; first (${e.problem_id}): ${e.at}: ${e.kind}: ${e.message}` : ''}`;
}

/** An NLL eval's summary: nothing sampled, the chats' NLL per token. */
export function isNllSummary(s: Pick<EvalSummary, 'grading'>): boolean {
  return s.grading === 'nll';
}

/** What a comparison's difference is of, and what the items are: "reward … problems", "NLL … chats". */
function measureWords(s: Pick<EvalSummary, 'grading'>): { measure: string; items: string } {
  return isNllSummary(s) ? { measure: 'NLL', items: 'chats' } : { measure: 'reward', items: 'problems' };
}

/** "NLL −0.213 [−0.240, −0.189]": a comparison's difference, signed. */
function signedDiff(e: Estimate): string {
  return `${e.value >= 0 ? '+' : ''}${formatEstimate(e)}`;
}

/** The NLL eval's table: NLL per token and scored tokens per chat, then the paired differences. */
function formatNllTable(s: EvalSummary): string {
  const head = ['target', 'chats', 'NLL/token', 'tokens/chat'];
  const rows = s.targets.map((t) => [`${t.label}${t.id === s.baseline ? ' (baseline)' : ''}`, String(t.problems), formatEstimate(t.metrics.nll), formatEstimate(t.metrics.tokens, 1)]);
  const lines = [pad([head, ...rows])];
  const label = (id: string) => s.targets.find((t) => t.id === id)?.label ?? id;
  for (const c of s.comparisons)
    lines.push(
      `${label(c.target)} vs ${label(c.baseline)}: NLL ${signedDiff(c.diff)} on ${c.problems} chats (negative: lower NLL, better); ` +
        `permutation p = ${fmtP(c.p_value)} (${c.exact ? 'exact' : `${c.permutations} draws`}); lower/higher/same ${c.wins}/${c.losses}/${c.ties}`,
    );
  lines.push(`${s.complete ? '' : 'INCOMPLETE (re-run to resume); '}95 % intervals: bootstrap over chats, B = ${s.bootstrap.resamples}; NLL/token: each chat's mean over its scored tokens, averaged over chats`);
  return lines.join('\n');
}

/** The summary table (targets × metrics, intervals in brackets), one line per comparison with the baseline, and each target's failed samples. */
export function formatEvalTable(s: EvalSummary): string {
  if (isNllSummary(s)) return formatNllTable(s);
  const n = s.n;
  const format = s.targets.some((t) => t.metrics.format);
  const failed = failedSamples(s).failed > 0;
  const head = ['target', 'problems', ...(failed ? ['failed'] : []), 'reward', 'pass@1', ...(n > 1 ? [`pass@${n}`] : []), 'stop rate', ...(format ? ['format'] : []), 'tokens'];
  const rows = s.targets.map((t) => [
    `${t.label}${t.id === s.baseline ? ' (baseline)' : ''}`,
    String(t.problems),
    ...(failed ? [`${t.reward_errors}/${t.samples}`] : []),
    formatEstimate(t.metrics.reward),
    formatEstimate(t.metrics.pass_at?.['pass@1']),
    ...(n > 1 ? [formatEstimate(t.metrics.pass_at?.[`pass@${n}`])] : []),
    formatEstimate(t.metrics.stop_rate, 2),
    ...(format ? [t.metrics.format ? formatEstimate(t.metrics.format, 2) : '-'] : []),
    formatEstimate(t.metrics.completion_tokens, 1),
  ]);
  const lines = [pad([head, ...rows])];
  const label = (id: string) => s.targets.find((t) => t.id === id)?.label ?? id;
  for (const c of s.comparisons) {
    const sign = c.diff.value >= 0 ? '+' : '';
    lines.push(
      `${label(c.target)} vs ${label(c.baseline)}: reward ${sign}${formatEstimate(c.diff)} on ${c.problems} problems; ` +
        `permutation p = ${fmtP(c.p_value)} (${c.exact ? 'exact' : `${c.permutations} draws`}); ` +
        `wins/losses/ties ${c.wins}/${c.losses}/${c.ties}${c.mcnemar_p !== undefined ? `; McNemar p = ${fmtP(c.mcnemar_p)}` : ''}`,
    );
  }
  for (const t of s.targets) {
    const f = failureLine(s, t);
    if (f) lines.push(`${t.label}: ${f}`);
  }
  lines.push(`${s.complete ? '' : 'INCOMPLETE (re-run to resume); '}95 % intervals: bootstrap over problems, B = ${s.bootstrap.resamples}; n = ${n}, correct = reward ≥ ${s.correct_threshold}`);
  // a benchmark's headline: its accuracy (pass@1: the share of samples graded correct) with its interval
  if (s.grading === 'benchmark') for (const t of s.targets) lines.unshift(`${s.benchmark ?? 'benchmark'} accuracy of ${t.label}: ${formatEstimate(t.metrics.pass_at?.['pass@1'])} (95 % interval) on ${t.problems} problems`);
  return lines.join('\n');
}

/**
 * Problems where `target`'s mean reward is below the baseline's (beyond FLOAT_TOLERANCE: the losses of
 * the paired comparison), worst first; in an NLL eval, chats where its NLL is above the baseline's
 * (diff = target's NLL − baseline's, worst first).
 */
export function regressedProblems(s: EvalSummary, target: string): Array<{ row: ProblemRow; diff: number }> {
  const out: Array<{ row: ProblemRow; diff: number }> = [];
  const nll = isNllSummary(s);
  // the value where higher is better
  const score = (c: ProblemRow['targets'][string] | undefined) => (nll ? (c?.nll !== undefined ? -c.nll : undefined) : c?.reward);
  for (const row of s.problems) {
    const a = score(row.targets[target]);
    const b = score(row.targets[s.baseline]);
    if (a !== undefined && b !== undefined && compareWithTolerance(a, b) < 0) out.push({ row, diff: nll ? b - a : a - b });
  }
  return nll ? out.sort((x, y) => y.diff - x.diff) : out.sort((x, y) => x.diff - y.diff);
}

/** The table plus, per non-baseline target, its regressed problems (at most `limit` each). */
export function formatEvalStatus(s: EvalSummary, limit = 10): string {
  const parts = [formatEvalTable(s)];
  for (const t of s.targets) {
    if (t.id === s.baseline) continue;
    const reg = regressedProblems(s, t.id);
    if (reg.length === 0) {
      parts.push(`${t.label}: no regressed problem`);
      continue;
    }
    parts.push(
      `${t.label}: ${reg.length} regressed ${measureWords(s).items === 'chats' ? 'chat(s) (NLL above the baseline\'s)' : 'problem(s)'}${reg.length > limit ? ` (worst ${limit})` : ''}:\n` +
        reg
          .slice(0, limit)
          .map(({ row, diff }) => `  ${row.problem_id}  ${isNllSummary(s) ? '+' : ''}${diff.toFixed(2)}  ${JSON.stringify(row.question.length > 80 ? row.question.slice(0, 77) + '…' : row.question)} (answer ${row.ground_truth})`)
          .join('\n'),
    );
  }
  return parts.join('\n\n');
}

/** "3 targets · 1,029 problems · n=4" (and "incomplete" when samples are missing): a results folder in one line. */
export function describeEvalResults(s: EvalSummary): string {
  const parts = [
    `${s.targets.length} target${s.targets.length === 1 ? '' : 's'}`,
    ...(isNllSummary(s)
      ? [`${s.problems.length.toLocaleString('en-US')} chat${s.problems.length === 1 ? '' : 's'}`, 'NLL']
      : [`${s.problems.length.toLocaleString('en-US')} problem${s.problems.length === 1 ? '' : 's'}`, `n=${s.n}`]),
  ];
  if (!s.complete) parts.push('incomplete');
  return parts.join(' · ');
}

/**
 * One line per target against the baseline: "ckpt 80 vs base: reward +0.213 [0.189, 0.237] on 1029
 * problems, p < 0.001; 240 better, 31 worse, 758 tied".
 */
export function baselineComparisonLines(s: EvalSummary): string[] {
  const label = (id: string) => s.targets.find((t) => t.id === id)?.label ?? id;
  const { measure, items } = measureWords(s);
  return s.comparisons.map((c) => {
    const p = c.p_value < 0.001 ? 'p < 0.001' : `p = ${c.p_value.toFixed(3)}`;
    return `${label(c.target)} vs ${label(c.baseline)}: ${measure} ${signedDiff(c.diff)} on ${c.problems} ${items}, ${p}; ${c.wins} better, ${c.losses} worse, ${c.ties} tied`;
  });
}
