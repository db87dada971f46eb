// The run doctor: the GRPO playbook's checks as short findings, each with its evidence and the
// usual remedy. `diagnoseMetrics` reads the metric series of metrics.jsonl (the metrics panel's
// header); `diagnoseIteration` reads one iteration's samples (the group breakdown's header). When
// the evidence is thin (too few iterations or samples) a rule says nothing. An environment run's
// iteration (episodes) adds three rules: many episodes ending at max_turns, frequent replies that do
// not parse (tool calls the renderer could not read), and any env error, named with its file and
// line (an env error needs no threshold: it is a bug in the env file). Pure: the webviews, the CLI
// and the tests run it.
import { METRIC } from './metricKeys';


export interface Finding {
  id: 'mostly-all-bad' | 'mostly-all-good' | 'reward-errors' | 'kl-spike' | 'flat-reward-tiny-kl' | 'truncation' | 'episodes-max-turns' | 'parse-errors' | 'env-errors' | 'queue-waiting';
  title: string;
  evidence: string;
  remedy: string;
}

/** metric name → value per step (merged rows, ascending steps); missing or non-finite values are null */
export type MetricSeries = (key: string) => Array<number | null>;

const WINDOW = 5;
const MIN_ITERATIONS = 3;
const MOSTLY = 0.6;
const TRUNCATED = 0.2;
const ERRORS = 0.05;
/** episodes ending at max_turns */
const MAX_TURNS = 0.3;
/** replies that did not parse */
const PARSE_ERRORS = 0.1;
/** episodes needed before the max_turns and parse rules speak */
const MIN_EPISODES = 8;

/** the share of the run's time on a paused queue above which it "spent most of its time waiting" */
const WAITING = 0.5;

const pct = (x: number) => `${Math.round(x * 100)}%`;

function recent(values: Array<number | null>, n: number): number[] {
  const out: number[] = [];
  for (let i = values.length - 1; i >= 0 && out.length < n; i--) {
    const v = values[i];
    if (v !== null && v !== undefined && Number.isFinite(v)) out.unshift(v);
  }
  return out;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function groupFindings(allBad: number, allGood: number, truncated: number | undefined, over: string): Finding[] {
  const out: Finding[] = [];
  if (allBad >= MOSTLY) {
    out.push({
      id: 'mostly-all-bad',
      title: 'Mostly ALL-0 groups: little learning signal',
      evidence: `${pct(allBad)} of groups scored 0 on every sample ${over}${truncated !== undefined ? `; ${pct(truncated)} of samples were cut off by max_tokens` : ''}.`,
      remedy: 'The task may be too hard for the model, the reward too strict, or answers truncated: read a few ALL-0 groups, loosen the reward or pick easier problems, and raise max_tokens if truncation is high.',
    });
  }
  if (allGood >= MOSTLY) {
    out.push({
      id: 'mostly-all-good',
      title: 'Mostly ALL-1 groups: converged or too easy',
      evidence: `${pct(allGood)} of groups scored 1 on every sample ${over}.`,
      remedy: 'Sample the model on the holdout set; if it is good enough, stop here, otherwise use harder problems.',
    });
  }
  if (truncated !== undefined && truncated >= TRUNCATED) {
    out.push({
      id: 'truncation',
      title: 'Many samples cut off by max_tokens',
      evidence: `${pct(truncated)} of samples stopped at max_tokens ${over}.`,
      remedy: 'Raise max_tokens (or ask for shorter answers in the prompt).',
    });
  }
  return out;
}

export function diagnoseMetrics(steps: readonly number[], series: MetricSeries): Finding[] {
  if (steps.length < MIN_ITERATIONS) return [];
  const allBad = recent(series(METRIC.fracAllBad), WINDOW);
  const allGood = recent(series(METRIC.fracAllGood), WINDOW);
  const truncated = recent(series(METRIC.fracTruncated), WINDOW);
  const over = `over the last ${Math.min(WINDOW, steps.length)} iterations`;
  // on-policy distillation without a reward: every sample scores 0 by design and the KL to the
  // teacher is the signal, so all-0 groups and a flat reward say nothing
  const rewards = recent(series(METRIC.reward), WINDOW);
  const rewardless = recent(series(METRIC.teacherKl), WINDOW).length > 0 && rewards.every((r) => r === 0);
  const out = rewardless ? [] : groupFindings(
    allBad.length >= MIN_ITERATIONS ? mean(allBad) : 0,
    allGood.length >= MIN_ITERATIONS ? mean(allGood) : 0,
    truncated.length >= MIN_ITERATIONS ? mean(truncated) : undefined,
    over,
  );

  const kl = recent(series(METRIC.klV1), 20);
  if (kl.length >= 6) {
    const last = kl[kl.length - 1]!;
    const before = median(kl.slice(0, -1));
    if (last > 1e-3 && last > 5 * Math.max(before, 1e-6)) {
      out.push({
        id: 'kl-spike',
        title: 'KL spike between sampler and trainer',
        evidence: `KL (v1) jumped to ${last.toPrecision(2)}, ${Math.round(last / Math.max(before, 1e-6))}× its median of ${before.toPrecision(2)} over the previous ${kl.length - 1} iterations.`,
        remedy: 'Lower the learning rate; a spike often precedes a collapse of reward.',
      });
    }
  }

  const reward = recent(series(METRIC.reward), 10);
  if (!rewardless && reward.length >= 10 && kl.length >= 5) {
    const spread = Math.max(...reward) - Math.min(...reward);
    const klMax = Math.max(...kl.slice(-10));
    if (spread < 0.02 && klMax < 1e-4) {
      out.push({
        id: 'flat-reward-tiny-kl',
        title: 'Flat reward with a tiny KL: the policy barely moves',
        evidence: `Reward stayed within ${spread.toPrecision(2)} over the last ${reward.length} iterations while KL (v1) stayed below ${klMax.toPrecision(2)}.`,
        remedy: 'The learning rate may be too low: try a larger one (the cookbook’s get_lr is a good start for LoRA).',
      });
    }
  }
  const waiting = queueWaiting(series);
  if (waiting) out.push(waiting);
  return out;
}

/** Most of the run's time went on a paused queue (time/queue_paused against time/total, over every step that has both). */
function queueWaiting(series: MetricSeries): Finding | undefined {
  const paused = series(METRIC.queuePaused);
  const total = series(METRIC.timeTotal);
  let p = 0;
  let t = 0;
  for (let i = 0; i < total.length; i++) {
    const a = paused[i];
    const b = total[i];
    if (a === null || a === undefined || b === null || b === undefined || !Number.isFinite(a) || !Number.isFinite(b)) continue;
    p += a;
    t += b;
  }
  if (!(t > 0) || p / t <= WAITING) return undefined;
  return {
    id: 'queue-waiting',
    title: 'Most of the time went waiting on a paused queue',
    evidence: `Requests waited on a paused queue (capacity, rate limit or billing) for ${Math.round(p)} s of the steps' ${Math.round(t)} s (${pct(Math.min(p / t, 1))}).`,
    remedy: 'The run is not hung and its settings are not at fault: the service held its requests. Fewer runs at once helps with a rate limit; a billing pause needs the account seen to; capacity frees up with time.',
  };
}

export interface IterationEvidence {
  groups: number;
  samples: number;
  allBad: number;
  allGood: number;
  rewardErrors: number;
  truncatedFraction: number;
  /** a distillation run without a reward (its samples all score 0 by design): no group findings */
  rewardless?: boolean;
  /** an environment run: its episodes' figures (its reward errors are env errors) */
  episodes?: EpisodeEvidence;
}

/** An iteration's episodes as the doctor reads them (episodeEvidence in episodeView.ts builds it from the samples). */
export interface EpisodeEvidence {
  episodes: number;
  /** episodes that ended at max_turns */
  maxTurns: number;
  /** the model's replies (turns) over all episodes */
  replies: number;
  /** replies that did not parse */
  parseErrors: number;
  firstParseError?: string;
  /** episodes the environment failed (scored 0) */
  envErrors: number;
  /** the first env error: its kind, message (`step (turn 2): ZeroDivisionError: …`) and line in the env file */
  firstEnvError?: { kind: string; message: string; line?: number };
  /** the env file's name */
  envFile?: string;
}

function episodeFindings(e: EpisodeEvidence, thin: boolean): Finding[] {
  const out: Finding[] = [];
  if (e.envErrors > 0) {
    const first = e.firstEnvError;
    const file = e.envFile ?? 'the env file';
    const at = first?.line !== undefined ? `${file}:${first.line}` : file;
    out.push({
      id: 'env-errors',
      title: 'The environment failed on some episodes',
      evidence: `${e.envErrors} of ${e.episodes} episodes (${pct(e.envErrors / e.episodes)}) ended with an env error and scored 0${first ? `; first at ${at}: ${first.kind}: ${first.message}` : ''}.`,
      remedy: `Fix ${at} (select an episode marked "env error" for its traceback, or filter "has env error"); failed episodes train on a 0 reward and teach nothing.`,
    });
  }
  if (thin || e.episodes < MIN_EPISODES) return out;
  if (e.maxTurns / e.episodes >= MAX_TURNS) {
    out.push({
      id: 'episodes-max-turns',
      title: 'Many episodes ran out of turns',
      evidence: `${e.maxTurns} of ${e.episodes} episodes (${pct(e.maxTurns / e.episodes)}) ended at max_turns before the environment said done.`,
      remedy: 'Read a few of them: if the task needs more turns raise env.max_turns; if the environment never ends them, have step() return episode_done when the episode is over.',
    });
  }
  if (e.replies > 0 && e.parseErrors / e.replies >= PARSE_ERRORS) {
    out.push({
      id: 'parse-errors',
      title: 'Many replies did not parse (tool calls or messages)',
      evidence: `${e.parseErrors} of ${e.replies} replies (${pct(e.parseErrors / e.replies)}) failed to parse${e.firstParseError ? `; first: ${e.firstParseError}` : ''}.`,
      remedy: "Check that the prompt shows the renderer's tool-call format (tools declared in initial_observation are rendered for you), that max_tokens leaves room for a whole call, and failed_parse_reward; selecting an episode shows each malformed call as written.",
    });
  }
  return out;
}

export function diagnoseIteration(e: IterationEvidence): Finding[] {
  const thin = e.groups < 4 || e.samples < 8;
  const episodes = e.episodes ? episodeFindings(e.episodes, thin) : [];
  if (thin) return episodes;
  const out = e.rewardless ? [] : groupFindings(e.allBad / e.groups, e.allGood / e.groups, e.truncatedFraction, 'in this iteration');
  // an environment run's reward errors are its env errors, found above with their file and line
  if (!e.episodes && e.rewardErrors / e.samples >= ERRORS) {
    out.unshift({
      id: 'reward-errors',
      title: 'The reward function failed on many samples',
      evidence: `${e.rewardErrors} of ${e.samples} samples (${pct(e.rewardErrors / e.samples)}) got a reward error.`,
      remedy: 'Fix the reward first (filter "has reward error" to see the failing samples and their tracebacks); training on errors teaches nothing.',
    });
  }
  return [...episodes, ...out];
}
