// An environment episode (a sample record's `transcript`) as the views show it: the messages in
// order — what the environment showed (user, tool, system) apart from the model's sampled replies —
// each reply with the reward and metrics of the step that scored it and its parse error, and the
// episode's totals and why it ended. Pure: the group breakdown builds its DOM from `episodeView`,
// the sample documents and diffs (best vs worst, across evaluations and runs, What Changed) print
// `episodeText`, and the breakdown's list and the run doctor read `episodeSummary`.
import type { ChatMessage } from './chatMessage';
import { messageText } from './messageFormat';
import type { EpisodeEvidence } from './doctor';
import type { EpisodeTranscript, SampleSummary } from './sampleSchema';

/** Why an episode ended, in words: a short label (list flags, headers) and what it means. */
export const EPISODE_END: Readonly<Record<string, { label: string; explanation: string }>> = {
  completed: { label: 'done', explanation: 'the environment ended the episode (episode_done)' },
  max_turns: { label: 'max_turns', explanation: 'the episode ran out of turns (env.max_turns) before the environment said done' },
  max_tokens: { label: 'reply cut off', explanation: 'a reply reached max_tokens (scored context_overflow_reward)' },
  context_overflow: { label: 'context overflow', explanation: 'the next observation would pass max_trajectory_tokens (scored context_overflow_reward)' },
  parse_error: { label: 'parse error', explanation: 'a reply did not parse (scored failed_parse_reward; terminate_on_parse_error)' },
  env_error: { label: 'env error', explanation: 'the environment failed (an exception, a time-out or a wrong return shape): the episode scored 0' },
};

export function episodeEnd(stop: string): { stop: string; label: string; explanation: string } {
  const known = EPISODE_END[stop];
  return { stop, label: known?.label ?? stop, explanation: known?.explanation ?? `the episode ended: ${stop}` };
}

/** One entry of a transcript, in the order the conversation happened. */
export type TranscriptEntry =
  /** a message the environment showed the model (user, tool result, system, or history it rewrote) */
  | { kind: 'env'; turn: number; message: ChatMessage }
  /** the environment replaced the conversation instead of extending it (a new datum starts here) */
  | { kind: 'reset'; turn: number }
  /** the model's sampled reply, as the renderer parsed it, and the step that scored it */
  | {
      kind: 'reply';
      turn: number;
      message: ChatMessage;
      reward: number;
      /** the step's metrics, sorted by name */
      metrics: Array<[string, number]>;
      /** the step's logs, sorted by name */
      logs: Array<[string, string]>;
      parseError?: string;
      obTokens: number;
      acTokens: number;
      stopReason: string;
      /** this step ended the episode */
      done: boolean;
    };

export interface EpisodeView {
  entries: TranscriptEntry[];
  /** the model's turns (sampled replies) */
  turns: number;
  /** the sum of the step rewards */
  stepRewards: number;
  /** compute_group_rewards' reward (0 without it) */
  groupReward: number;
  groupMetrics: Array<[string, number]>;
  /** step rewards + group reward: the episode's total, which its advantage is computed from */
  total: number;
  end: { stop: string; label: string; explanation: string };
  parseErrors: number;
  toolCalls: number;
  /** the names of the tools the environment declared */
  tools: string[];
}

const sorted = <V>(r: Record<string, V> | undefined): Array<[string, V]> => Object.entries(r ?? {}).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

export function episodeView(t: EpisodeTranscript): EpisodeView {
  const entries: TranscriptEntry[] = [];
  let stepRewards = 0;
  let parseErrors = 0;
  let toolCalls = 0;
  t.turns.forEach((turn, i) => {
    const n = i + 1;
    if (turn.reset) entries.push({ kind: 'reset', turn: n });
    for (const m of turn.new_messages) entries.push({ kind: 'env', turn: n, message: m });
    stepRewards += turn.reward;
    if (turn.parse_error !== undefined) parseErrors++;
    toolCalls += turn.reply.tool_calls?.length ?? 0;
    entries.push({
      kind: 'reply',
      turn: n,
      message: turn.reply,
      reward: turn.reward,
      metrics: sorted(turn.metrics),
      logs: sorted(turn.logs).map(([k, v]) => [k, String(v)]),
      ...(turn.parse_error !== undefined ? { parseError: turn.parse_error } : {}),
      obTokens: turn.ob_tokens,
      acTokens: turn.ac_tokens,
      stopReason: turn.stop_reason,
      done: turn.episode_done,
    });
  });
  return {
    entries,
    turns: t.turns.length,
    stepRewards,
    groupReward: t.group_reward,
    groupMetrics: sorted(t.group_metrics),
    total: stepRewards + t.group_reward,
    end: episodeEnd(t.stop),
    parseErrors,
    toolCalls,
    tools: (t.tools ?? []).map((s) => s.name),
  };
}

/** `0.5`, `-1`, `+0.25`: a signed number as the text views print rewards. */
const signed = (x: number) => `${x > 0 ? '+' : ''}${Number(x.toPrecision(6))}`;

/**
 * An episode as the lines of a sample document, turn by turn, so that two episodes diff turn against
 * turn: `## turn N`, each message the environment showed under `### <role>`, then the reply under
 * `### assistant · reward r` with its metrics, parse error and parsed parts (reasoning, tool calls).
 */
export function episodeText(t: EpisodeTranscript): string[] {
  const v = episodeView(t);
  const lines = [
    '## episode',
    `turns:        ${v.turns}`,
    `ended:        ${v.end.label} (${v.end.explanation})`,
    `step rewards: ${Number(v.stepRewards.toPrecision(6))}`,
    `group reward: ${Number(v.groupReward.toPrecision(6))}${v.groupMetrics.length ? ` (${v.groupMetrics.map(([k, x]) => `${k}=${x}`).join(', ')})` : ''}`,
    `total:        ${Number(v.total.toPrecision(6))}`,
  ];
  if (v.tools.length) lines.push(`tools:        ${v.tools.join(', ')}`);
  let turn = 0;
  for (const e of v.entries) {
    if (e.turn !== turn) {
      turn = e.turn;
      lines.push('', `## turn ${turn}`);
    }
    if (e.kind === 'reset') lines.push('(the environment rewrote the conversation: a new datum starts here)');
    // a tool result is headed by what it answers (`### tool result of add · id call_1`)
    else if (e.kind === 'env') lines.push(...(e.message.role === 'tool' ? [messageText(e.message, 3)] : [`### ${e.message.role}`, messageText(e.message, 4)]));
    else {
      lines.push(`### assistant · reward ${signed(e.reward)}${e.done ? ' · episode done' : ''}`);
      if (e.metrics.length) lines.push(`metrics: ${e.metrics.map(([k, x]) => `${k}=${x}`).join(', ')}`);
      if (e.parseError !== undefined) lines.push(`⚠ parse error: ${e.parseError}`);
      // a reply of tool calls only has no text: no blank line before its first call
      lines.push(messageText(e.message, 4).replace(/^\n/, ''));
    }
  }
  return lines;
}

/** The episode figures of an iteration's samples for the run doctor; undefined when none is an episode. */
export function episodeEvidence(samples: readonly SampleSummary[], envFile?: string): EpisodeEvidence | undefined {
  let episodes = 0;
  let maxTurns = 0;
  let replies = 0;
  let parseErrors = 0;
  let envErrors = 0;
  let firstParseError: string | undefined;
  let firstEnvError: EpisodeEvidence['firstEnvError'];
  for (const s of samples) {
    const e = s.episode;
    if (!e) continue;
    episodes++;
    replies += e.turns;
    parseErrors += e.parse_errors;
    firstParseError ??= e.first_parse_error;
    if (e.stop === 'max_turns') maxTurns++;
    if (s.reward_error) {
      envErrors++;
      firstEnvError ??= { kind: s.reward_error.kind, message: s.reward_error.message, ...(s.reward_error.line !== undefined ? { line: s.reward_error.line } : {}) };
    }
  }
  if (episodes === 0) return undefined;
  return {
    episodes,
    maxTurns,
    replies,
    parseErrors,
    envErrors,
    ...(firstParseError !== undefined ? { firstParseError } : {}),
    ...(firstEnvError ? { firstEnvError } : {}),
    ...(envFile !== undefined ? { envFile } : {}),
  };
}
