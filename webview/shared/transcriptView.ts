// An environment episode as a transcript (the group breakdown's selected episode; any panel showing
// an episode): a summary line (total reward = step rewards + group reward, turns, why it ended), then
// each turn under its heading — the messages the environment showed (user, tool results, system) in
// boxes of their own colour, then the model's reply set apart, with the reward and metrics of the step
// that scored it in its heading and its parse error flagged. Messages are messageView.ts's (reasoning
// folded, tool calls formatted). The view model is src/protocol/episodeView.ts; this module only
// builds the DOM, with text only. Theme colours only (light, dark, high contrast).
import './transcript.css';
import { el } from './dom';
import { messageView } from './messageView';
import type { EpisodeView, TranscriptEntry } from '../../src/protocol/episodeView';

const num = (v: number) => (Math.abs(v) !== 0 && Math.abs(v) < 1e-3 ? v.toExponential(2) : Number(v.toPrecision(3)).toString());
const signed = (v: number) => `${v > 0 ? '+' : ''}${num(v)}`;
const sign = (v: number) => (v > 0 ? 'positive' : v < 0 ? 'negative' : 'muted');

/** The summary line: total reward, turns, why it ended. */
export function episodeSummaryView(v: EpisodeView): HTMLElement {
  const box = el('div', `ep-summary ep-end-${v.end.stop}`);
  box.append(
    el('span', `ep-total num ${sign(v.total)}`, `total reward ${signed(v.total)}`),
    el('span', 'muted', v.groupReward !== 0 || v.groupMetrics.length ? ` = steps ${signed(v.stepRewards)} + group ${signed(v.groupReward)}` : ''),
    el('span', '', ` · ${v.turns} turn${v.turns === 1 ? '' : 's'}`),
    ...(v.toolCalls ? [el('span', '', ` · ${v.toolCalls} tool call${v.toolCalls === 1 ? '' : 's'}`)] : []),
    ...(v.parseErrors ? [el('span', 'ep-warning', ` · ⚠ ${v.parseErrors} parse error${v.parseErrors === 1 ? '' : 's'}`)] : []),
    el('span', '', ' · ended: '),
    el('span', `ep-end ${v.end.stop === 'completed' ? '' : v.end.stop === 'env_error' ? 'negative' : 'ep-warning'}`, v.end.label),
  );
  box.title = v.end.explanation;
  const why = el('div', 'ep-why muted', v.end.explanation);
  const wrap = el('div', 'ep-head');
  wrap.append(box, why);
  if (v.groupMetrics.length) wrap.append(metricsView(v.groupMetrics, 'group metrics'));
  if (v.tools.length) wrap.append(el('div', 'muted', `tools: ${v.tools.join(', ')}`));
  return wrap;
}

function metricsView(metrics: ReadonlyArray<[string, number]>, label: string): HTMLElement {
  const list = el('span', 'ep-metrics');
  list.setAttribute('aria-label', label);
  for (const [k, x] of metrics) {
    const chip = el('span', 'ep-metric');
    chip.append(el('span', 'muted', `${k} `), el('span', 'num', num(x)));
    list.append(chip);
  }
  return list;
}

/** The model's reply with the step that scored it. */
function replyView(e: Extract<TranscriptEntry, { kind: 'reply' }>): HTMLElement {
  const box = el('div', `ep-msg ep-model${e.parseError !== undefined ? ' ep-parse-error' : ''}`);
  box.setAttribute('role', 'group');
  box.setAttribute('aria-label', `Model reply, turn ${e.turn}, reward ${signed(e.reward)}`);
  const head = el('div', 'ep-step');
  head.append(el('span', 'ep-role', 'model'), el('span', `ep-reward num ${sign(e.reward)}`, `reward ${signed(e.reward)}`));
  if (e.metrics.length) head.append(metricsView(e.metrics, `metrics of turn ${e.turn}`));
  head.append(el('span', 'muted ep-tokens', `${e.acTokens} tok · ${e.stopReason}${e.done ? ' · episode done' : ''}`));
  box.append(head);
  if (e.parseError !== undefined) box.append(el('div', 'msg-flag', `⚠ parse error: ${e.parseError}`));
  box.append(messageView(e.message, { emptyText: '(empty reply)' }));
  if (e.logs.length) box.append(el('div', 'muted ep-logs', `logs: ${e.logs.map(([k, x]) => `${k}=${x}`).join(', ')}`));
  return box;
}

/** A message the environment showed: its role, in a box coloured by role (user, tool, system). */
function envView(m: Extract<TranscriptEntry, { kind: 'env' }>['message']): HTMLElement {
  const box = el('div', `ep-msg ep-env ep-role-${m.role}`);
  box.append(messageView(m, { showRole: true }));
  return box;
}

/** The whole transcript: the summary, then each turn (a heading, the environment's messages, the reply). */
export function transcriptView(v: EpisodeView): HTMLElement {
  const section = el('section', 'transcript');
  section.setAttribute('aria-label', `Episode transcript, ${v.turns} turns, total reward ${signed(v.total)}, ended: ${v.end.label}`);
  section.append(episodeSummaryView(v));
  const turns = el('ol', 'ep-turns');
  let current: HTMLElement | undefined;
  let turn = 0;
  for (const e of v.entries) {
    if (e.turn !== turn || !current) {
      turn = e.turn;
      current = el('li', 'ep-turn');
      current.dataset.turn = String(turn);
      current.append(el('h4', 'ep-turn-head', `Turn ${turn}`));
      turns.append(current);
    }
    if (e.kind === 'reset') current.append(el('div', 'ep-reset muted', 'The environment rewrote the conversation here (a new datum starts).'));
    else if (e.kind === 'env') current.append(envView(e.message));
    else current.append(replyView(e));
  }
  if (v.entries.length === 0) turns.append(el('li', 'muted', 'No turn was played (the environment failed before the first reply).'));
  section.append(turns);
  return section;
}
