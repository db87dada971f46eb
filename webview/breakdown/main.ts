// The GRPO group breakdown panel: one iteration of a run — a header (groups by signal, reward
// histogram, truncation, reward errors, tokens, KL and entropy of the step), the groups sortable and
// filterable, each group's prompt once and then its G samples (reward, advantage coloured by sign,
// stop reason, tokens, reward error), and the selected sample in full with a per-token log-prob
// strip. An environment run's sample is an episode: its row says its turns and how it ended, and
// its detail is the transcript (../shared/transcriptView.ts). Filters, sort and expanded groups
// survive stepping to another iteration, hiding and reloads.
import '../shared/base.css';
import './breakdown.css';
import { BreakdownGroup, breakdownStats, buildGroups, GroupFilter, GroupKind, GroupSort, NO_FILTER, viewGroups } from '../../src/protocol/breakdown';
import { BreakdownProtocol, BreakdownSnapshot, IterationRef, ToWebview } from '../../src/protocol/breakdownProtocol';
import { PanelClient } from '../shared/client';
import { registerComponents } from '../shared/components';
import { byId, el, inputById, replaceChildrenWith, typedById } from '../shared/dom';
import { errorText } from '../../src/protocol/panelProtocol';
import { VirtualList } from './virtualList';
import { renderFindings } from '../shared/findings';
import { diagnoseIteration } from '../../src/protocol/doctor';
import { messageView } from '../shared/messageView';
import { hasStructure } from '../../src/protocol/messageFormat';
import { episodeEnd, episodeEvidence, episodeView } from '../../src/protocol/episodeView';
import { transcriptView } from '../shared/transcriptView';

registerComponents();
const client = new PanelClient(BreakdownProtocol);
const ROW = 26;
const KINDS: Array<{ kind: GroupKind; label: string }> = [
  { kind: 'mixed', label: 'mixed' },
  { kind: 'all-good', label: 'all good (ALL-1)' },
  { kind: 'all-bad', label: 'all bad (ALL-0)' },
];

const app = byId('app');
app.innerHTML = `
  <header class="run">
    <div class="title-row">
      <h1 id="title">Groups</h1>
      <vscode-button id="prev" appearance="secondary" aria-label="Previous iteration" title="Previous iteration (Alt+Left)">‹ Prev</vscode-button>
      <vscode-button id="next" appearance="secondary" aria-label="Next iteration" title="Next iteration (Alt+Right)">Next ›</vscode-button>
      <vscode-button id="what-changed" appearance="secondary" hidden title="Every holdout problem whose reward changed between this evaluation and the first (the latest, from the first), in one diff">What changed</vscode-button>
    </div>
    <div class="meta" id="meta"></div>
    <div class="stats" id="stats" aria-live="polite"></div>
    <div class="histogram" id="histogram" role="img"></div>
    <section class="findings" id="findings" aria-label="Run doctor" role="status" hidden></section>
  </header>
  <p id="message" role="status"></p>
  <div class="filters" role="toolbar" aria-label="Filter groups">
    <span id="kind-filters"></span>
    <label><input type="checkbox" id="f-error"> <span id="f-error-label">has reward error</span></label>
    <label><input type="checkbox" id="f-trunc"> has truncation</label>
    <input type="search" id="f-text" placeholder="Search prompts and completions" aria-label="Search prompts and completions">
    <label for="sort">Sort</label>
    <select id="sort">
      <option value="index">group order</option>
      <option value="reward-desc">mean reward, high first</option>
      <option value="reward-asc">mean reward, low first</option>
      <option value="spread-desc">reward spread</option>
      <option value="errors-desc">reward errors</option>
    </select>
    <span id="count" class="muted"></span>
  </div>
  <div class="body">
    <div id="list" class="vlist" tabindex="0" role="listbox" aria-label="Groups and samples"></div>
    <section id="detail" class="detail" aria-label="Selected sample"></section>
  </div>`;

const titleEl = byId('title');
const metaEl = byId('meta');
const statsEl = byId('stats');
const histEl = byId('histogram');
const messageEl = byId('message');
const countEl = byId('count');
const detailEl = byId('detail');
const textEl = inputById('f-text');
const errorEl = inputById('f-error');
const truncEl = inputById('f-trunc');
const sortEl = typedById('sort', HTMLSelectElement);

type Row = { kind: 'group'; g: number } | { kind: 'prompt'; g: number } | { kind: 'sample'; g: number; s: number };

const saved = client.getState();
let snapshot: BreakdownSnapshot | undefined;
let groups: BreakdownGroup[] = [];
let filter: GroupFilter = saved?.filter ?? { ...NO_FILTER };
let sort: GroupSort = saved?.sort ?? 'index';
const expanded = new Set<number>(saved?.expanded ?? []);
let rows: Row[] = [];
/** the host's answer for filter.text; undefined while none (the text does not filter yet) */
let textMatches: ReadonlySet<number> | undefined;
let searchRequest: AbortController | undefined;
let active = 0;
let selected: { g: number; s: number } | undefined;
/** an environment run: its samples are episodes and its reward errors are env errors */
let envRun = false;

const kindBoxes = KINDS.map(({ kind, label }) => {
  const box = el('input');
  box.type = 'checkbox';
  box.checked = filter.kinds.includes(kind);
  box.addEventListener('change', () => {
    filter = { ...filter, kinds: KINDS.filter((_, i) => kindBoxes[i]!.checked).map((k) => k.kind) };
    applyView();
  });
  const wrap = el('label', `kind-${kind}`);
  wrap.append(box, ` ${label}`);
  byId('kind-filters').append(wrap);
  return box;
});
errorEl.checked = filter.rewardError;
truncEl.checked = filter.truncated;
textEl.value = filter.text;
sortEl.value = sort;

const list = new VirtualList(byId('list'), ROW, renderRow);

function saveState(): void {
  if (!snapshot) return;
  client.setState({ runDir: snapshot.runDir, shown: snapshot.shown, filter, sort, expanded: [...expanded] });
}

function fmt(v: number | null | undefined, digits = 3): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return Math.abs(v) !== 0 && Math.abs(v) < 1e-3 ? v.toExponential(2) : Number(v.toPrecision(digits)).toString();
}

function pct(n: number, of: number): string {
  return of ? `${Math.round((100 * n) / of)}%` : '–';
}

function showSnapshot(snap: BreakdownSnapshot): void {
  // the complete snapshot that follows a loading one of the same iteration keeps the user's selection
  const completesLoading = snapshot?.loading !== undefined && snapshot.shown.iteration === snap.shown.iteration && snapshot.shown.split === snap.shown.split;
  snapshot = snap;
  groups = buildGroups(snap.records, snap.prompts);
  textMatches = undefined;
  const ref = snap.shown;
  titleEl.textContent = `${snap.runName} · iteration ${ref.iteration}${ref.split === 'eval' ? ' (holdout evaluation)' : ''}`;
  document.title = titleEl.textContent;
  metaEl.textContent = snap.runDir;
  const stats = breakdownStats(groups);
  const c = stats.counts;
  const episodes = episodeEvidence(snap.records, snap.envFile);
  envRun = episodes !== undefined || snap.envFile !== undefined;
  statsEl.replaceChildren(
    ...[
      `${stats.groups} groups · ${stats.samples} samples`,
      `mixed ${c.mixed} (${pct(c.mixed, stats.groups)})`,
      `all good ${c['all-good']} (${pct(c['all-good'], stats.groups)})`,
      `all bad ${c['all-bad']} (${pct(c['all-bad'], stats.groups)})`,
      `truncated ${pct(stats.truncatedFraction * stats.samples, stats.samples)}`,
      `${envRun ? 'env' : 'reward'} errors ${stats.rewardErrors}`,
      `mean tokens ${fmt(stats.meanTokens)}`,
      `KL ${fmt(snap.step.kl)}`,
      `entropy ${fmt(snap.step.entropy)}`,
    ].map((t) => el('span', 'stat', t)),
  );
  const peak = Math.max(1, ...stats.histogram.bins);
  histEl.replaceChildren(...stats.histogram.bins.map((n) => {
    const bar = el('span', 'bar');
    bar.style.height = `${Math.round((28 * n) / peak)}px`;
    bar.title = `${n} samples`;
    return bar;
  }));
  histEl.setAttribute('aria-label', `reward histogram from ${fmt(stats.histogram.min)} to ${fmt(stats.histogram.max)}: ${stats.histogram.bins.join(', ')}`);
  histEl.hidden = stats.samples === 0;
  // no findings from the first groups alone: they are not the iteration's evidence
  byId('f-error-label').textContent = envRun ? 'has env error' : 'has reward error';
  renderFindings(
    byId('findings'),
    snap.loading ? [] : diagnoseIteration({ groups: stats.groups, samples: stats.samples, allBad: c['all-bad'], allGood: c['all-good'], rewardErrors: stats.rewardErrors, truncatedFraction: stats.truncatedFraction, ...(snap.rewardless ? { rewardless: true } : {}), ...(episodes ? { episodes } : {}) }),
  );
  const loading = snap.loading ? `Reading the samples file (${pct(snap.loading.bytesRead, snap.loading.bytesTotal)}): the first ${stats.groups} groups are shown, the header counts only them.` : '';
  messageEl.textContent = [loading, snap.missing ?? '', snap.problems.length ? `${snap.problems.length} line(s) of the samples file were left out: ${snap.problems.slice(0, 3).join('; ')}` : ''].filter(Boolean).join(' ');
  setEnabled('prev', neighbour(-1) !== undefined);
  setEnabled('next', neighbour(1) !== undefined);
  byId('what-changed').hidden = !(ref.split === 'eval' && snap.available.eval.length >= 2);
  if (!completesLoading) selected = undefined;
  applyView();
  saveState();
  if (filter.text.trim()) void search();
}

/** Asks the host which groups contain the search text; a newer keystroke cancels the question. */
async function search(): Promise<void> {
  searchRequest?.abort();
  if (!snapshot || !filter.text.trim()) {
    textMatches = undefined;
    applyView();
    return;
  }
  const abort = (searchRequest = new AbortController());
  try {
    const { groups: found } = await client.request('search', { ref: snapshot.shown, text: filter.text }, abort.signal);
    if (abort.signal.aborted) return;
    textMatches = new Set(found);
    applyView();
  } catch (err) {
    if (!abort.signal.aborted) messageEl.textContent = `Search failed: ${errorText(err)}`;
  }
}

function setEnabled(id: string, enabled: boolean): void {
  const b = byId(id);
  if (enabled) b.removeAttribute('disabled');
  else b.setAttribute('disabled', '');
}

/** The sampled iteration before (-1) or after (+1) the shown one, in its split. */
function neighbour(dir: -1 | 1): IterationRef | undefined {
  if (!snapshot) return undefined;
  const its = snapshot.shown.split === 'train' ? snapshot.available.train : snapshot.available.eval;
  const cur = snapshot.shown.iteration;
  const next = dir === 1 ? its.find((i) => i > cur) : [...its].reverse().find((i) => i < cur);
  return next === undefined ? undefined : { iteration: next, split: snapshot.shown.split };
}

function step(dir: -1 | 1): void {
  const ref = neighbour(dir);
  if (ref) client.post({ type: 'show', ref });
}

function applyView(): void {
  const shown = viewGroups(groups, filter, sort, textMatches);
  rows = [];
  for (const g of shown) {
    rows.push({ kind: 'group', g });
    if (expanded.has(groups[g]!.groupIdx)) {
      rows.push({ kind: 'prompt', g });
      groups[g]!.samples.forEach((_, s) => rows.push({ kind: 'sample', g, s }));
    }
  }
  countEl.textContent = `${shown.length} of ${groups.length} groups`;
  active = Math.min(active, Math.max(rows.length - 1, 0));
  list.setCount(rows.length);
  renderDetail();
  saveState();
}

function renderRow(i: number): HTMLElement {
  const row = rows[i]!;
  const g = groups[row.g]!;
  const div = el('div', `row ${row.kind}`);
  div.id = `row-${i}`;
  div.setAttribute('role', 'option');
  div.setAttribute('aria-selected', String(i === active));
  if (i === active) div.classList.add('active');
  if (row.kind === 'group') {
    const open = expanded.has(g.groupIdx);
    div.setAttribute('aria-expanded', String(open));
    div.append(
      el('span', 'twisty', open ? '▾' : '▸'),
      el('span', 'idx', `#${g.groupIdx}`),
      el('span', `kind kind-${g.kind}`, g.kind === 'all-good' ? 'ALL-1' : g.kind === 'all-bad' ? 'ALL-0' : 'mixed'),
      el('span', 'num', `mean ${fmt(g.meanReward)}`),
      ...(g.rewardErrors ? [el('span', 'flag negative', `${g.rewardErrors} ${envRun ? 'env' : 'reward'} error${g.rewardErrors > 1 ? 's' : ''}`)] : []),
      ...(g.truncated ? [el('span', 'flag', `${g.truncated} truncated`)] : []),
      el('span', 'text muted', `${g.problemId} · ${oneLine(g.question)}`),
    );
  } else if (row.kind === 'prompt') {
    // the question as the data gave it; the rendered template is in the sample's detail
    div.append(el('span', 'label muted', 'question'), el('span', 'text', oneLine(g.question)));
    div.title = g.question;
  } else {
    const s = g.samples[row.s]!;
    if (selected && selected.g === row.g && selected.s === row.s) div.classList.add('selected');
    div.append(
      el('span', 'num', `r ${fmt(s.reward)}`),
      el('span', `num ${s.advantage > 0 ? 'positive' : s.advantage < 0 ? 'negative' : 'muted'}`, `A ${s.advantage > 0 ? '+' : ''}${fmt(s.advantage)}`),
      el('span', `stop ${s.stop_reason === 'length' ? 'negative' : 'muted'}`, s.stop_reason === 'length' ? 'truncated' : s.stop_reason),
      el('span', 'num muted', `${s.token_count} tok`),
      ...(s.reward_error ? [el('span', 'flag negative', s.reward_error.kind)] : []),
      ...(s.has_thinking ? [el('span', 'flag muted', 'thinking')] : []),
      ...(s.tool_call_count ? [el('span', 'flag tool', `${s.tool_call_count} tool call${s.tool_call_count > 1 ? 's' : ''}`)] : []),
      ...(s.malformed_call_count ? [el('span', 'flag warning', `⚠ ${s.malformed_call_count} malformed call${s.malformed_call_count > 1 ? 's' : ''}`)] : []),
      ...(s.episode ? episodeFlags(s.episode) : []),
      el('span', 'text', s.preview),
    );
  }
  div.addEventListener('click', () => {
    active = i;
    activate(i);
  });
  return div;
}

/** An episode's row: its turns, its tool calls and parse errors, and how it ended unless the env said done. */
function episodeFlags(e: NonNullable<BreakdownGroup['samples'][number]['episode']>): HTMLElement[] {
  const end = episodeEnd(e.stop);
  const flags = [el('span', 'flag muted', `${e.turns} turn${e.turns === 1 ? '' : 's'}`)];
  if (e.tool_calls) flags.push(el('span', 'flag tool', `${e.tool_calls} tool call${e.tool_calls > 1 ? 's' : ''}`));
  if (e.parse_errors) flags.push(el('span', 'flag warning', `⚠ ${e.parse_errors} parse error${e.parse_errors > 1 ? 's' : ''}`));
  if (e.stop !== 'completed') {
    const flag = el('span', `flag end ${e.stop === 'env_error' ? 'negative' : 'warning'}`, end.label);
    flag.title = end.explanation;
    flags.push(flag);
  }
  return flags;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').slice(0, 400);
}

function activate(i: number): void {
  const row = rows[i];
  if (!row) return;
  if (row.kind === 'group') {
    const id = groups[row.g]!.groupIdx;
    if (expanded.has(id)) expanded.delete(id);
    else expanded.add(id);
    applyView();
  } else if (row.kind === 'sample') {
    selected = { g: row.g, s: row.s };
    renderDetail();
    list.refresh();
  }
}

function renderDetail(): void {
  const g = selected && groups[selected.g];
  const s = g && selected ? g.samples[selected.s] : undefined;
  if (!g || !s) {
    detailEl.replaceChildren(el('p', 'muted', rows.length ? 'Select a sample (Enter on a sample row) to see it in full.' : groups.length ? 'No group matches the filters.' : ''));
    return;
  }
  const head = el('div', 'detail-head');
  head.append(
    el('strong', '', `group #${g.groupIdx} · sample ${s.traj_idx}`),
    el('span', 'num', ` reward ${fmt(s.reward)}`),
    el('span', `num ${s.advantage > 0 ? 'positive' : s.advantage < 0 ? 'negative' : ''}`, ` advantage ${s.advantage > 0 ? '+' : ''}${fmt(s.advantage)}`),
    el('span', 'muted', s.episode ? ` · ${s.episode.turns} turn${s.episode.turns === 1 ? '' : 's'} · ended: ${episodeEnd(s.episode.stop).label} · ${s.token_count} tokens · ground truth ${s.ground_truth}` : ` · ${s.stop_reason} · ${s.termination} · ${s.token_count} tokens · ground truth ${s.ground_truth}`),
  );
  const parts: HTMLElement[] = [head];
  const compare = el('a', 'compare', 'Compare best vs worst of this group');
  compare.href = '#';
  compare.addEventListener('click', (e) => {
    e.preventDefault();
    if (snapshot) client.post({ type: 'compareBestWorst', ref: snapshot.shown, groupIdx: g.groupIdx });
  });
  parts.push(compare);
  const ref = snapshot?.shown;
  if (ref?.split === 'eval' && (snapshot?.available.eval.length ?? 0) >= 2) {
    const across = link('Compare with another evaluation (first ↔ latest)', () => client.post({ type: 'compareEvaluations', ref, groupIdx: g.groupIdx, trajIdx: s.traj_idx }));
    across.id = 'compare-evaluations';
    parts.push(across);
  }
  if (ref) parts.push(link('Compare with another run on this prompt…', () => client.post({ type: 'compareRuns', ref, groupIdx: g.groupIdx, trajIdx: s.traj_idx })));
  const playground = el('a', 'compare', 'Open its prompt in the playground');
  playground.href = '#';
  playground.addEventListener('click', (e) => {
    e.preventDefault();
    client.post({ type: 'openInPlayground', problemId: g.problemId });
  });
  parts.push(playground);
  if (s.reward_error) {
    const err = el('div', 'reward-error negative');
    err.append(`${s.reward_error.kind}: ${s.reward_error.message} `);
    const file = snapshot?.envFile !== undefined ? `the env file ${snapshot.envFile}` : 'the reward file';
    const link = el('a', '', s.reward_error.line ? `open ${file} at line ${s.reward_error.line}` : `open ${file}`);
    link.href = '#';
    link.addEventListener('click', (e) => {
      e.preventDefault();
      client.post({ type: 'openRewardFile', ...(s.reward_error?.line ? { line: s.reward_error.line } : {}) });
    });
    err.append(link);
    if (s.reward_error.traceback) err.append(el('pre', 'traceback', s.reward_error.traceback));
    parts.push(err);
  }
  // the reply as the renderer parsed it (reasoning folded, tool calls formatted), filled in when the sample loads
  const reply = el('section', 'reply');
  reply.setAttribute('aria-label', 'Reply as the renderer parsed it');
  reply.hidden = true;
  const completionHead = el('h3', '', 'Completion');
  const completion = el('pre', 'completion', s.complete ? s.preview : `${s.preview}…`);
  // an episode: its transcript (filled in when the sample loads) instead of the last reply's completion
  const transcript = el('div', 'episode');
  if (s.episode) {
    transcript.append(el('h3', '', 'Transcript'), el('p', 'muted', 'loading the transcript…'));
    parts.push(transcript);
  } else parts.push(reply, completionHead, completion);
  const strip = el('div', 'tokens');
  strip.setAttribute('aria-label', 'per-token log-probabilities');
  strip.textContent = 'loading tokens…';
  // a distillation run's samples: the same tokens shaded by the reverse KL to the teacher (filled in when the sample loads)
  const teacherHead = el('h3', '', 'Tokens by KL to the teacher (darker = the teacher disagrees more)');
  const teacherStrip = el('div', 'tokens teacher');
  teacherStrip.setAttribute('aria-label', 'per-token KL to the teacher');
  teacherHead.hidden = teacherStrip.hidden = true;
  void loadSample({ completion, completionHead, reply, transcript }, strip, g.groupIdx, s.traj_idx, { head: teacherHead, strip: teacherStrip });
  parts.push(
    el('h3', '', s.episode ? 'Tokens of every reply, in order (darker = less likely)' : 'Tokens (darker = less likely)'),
    strip,
    teacherHead,
    teacherStrip,
    el('h3', '', s.episode ? 'First observation (as rendered)' : 'Prompt'),
    el('pre', 'prompt', g.prompt),
  );
  detailEl.replaceChildren(...parts);
}

function link(text: string, onClick: () => void): HTMLAnchorElement {
  const a = el('a', 'compare', text);
  a.href = '#';
  a.addEventListener('click', (e) => {
    e.preventDefault();
    onClick();
  });
  return a;
}

let sampleRequest: AbortController | undefined;

/** Fills the whole completion and the token strip of the selected sample; a newer selection cancels the request. */
async function loadSample(
  text: { completion: HTMLElement; completionHead: HTMLElement; reply: HTMLElement; transcript: HTMLElement },
  strip: HTMLElement,
  groupIdx: number,
  trajIdx: number,
  teacher: { head: HTMLElement; strip: HTMLElement },
): Promise<void> {
  if (!snapshot) return;
  sampleRequest?.abort();
  const abort = (sampleRequest = new AbortController());
  try {
    const full = await client.request('sample', { ref: snapshot.shown, groupIdx, trajIdx }, abort.signal);
    const { tokens, logprobs } = full;
    text.completion.textContent = full.completion;
    if (full.transcript) {
      const view = transcriptView(episodeView(full.transcript));
      // focusable, so a long transcript scrolls from the keyboard
      view.tabIndex = 0;
      text.transcript.replaceChildren(el('h3', '', 'Transcript'), view);
    }
    const parsed = { role: 'assistant' as const, content: full.content, ...(full.thinking !== undefined ? { thinking: full.thinking } : {}), ...(full.tool_calls ? { tool_calls: full.tool_calls } : {}), ...(full.unparsed_tool_calls ? { unparsed_tool_calls: full.unparsed_tool_calls } : {}) };
    if (hasStructure(parsed)) {
      text.reply.replaceChildren(el('h3', '', 'Reply (as the renderer parsed it)'), messageView(parsed));
      text.reply.hidden = false;
      text.completionHead.textContent = 'Completion as sampled';
    }
    replaceChildrenWith(
      strip,
      tokens.map((tok, i) => {
        const lp = logprobs[i];
        const cell = el('span', 'tok');
        const p = lp === undefined ? 0 : Math.exp(lp);
        cell.style.opacity = String(0.25 + 0.75 * (1 - p));
        cell.title = `token ${i}: id ${tok}, log-prob ${lp === undefined ? '–' : lp.toFixed(3)} (p ${p.toFixed(2)})`;
        return cell;
      }),
    );
    const tlp = full.teacher_logprobs;
    if (tlp && tlp.length === tokens.length) {
      teacher.head.hidden = teacher.strip.hidden = false;
      replaceChildrenWith(
        teacher.strip,
        tokens.map((tok, i) => {
          const kl = (logprobs[i] ?? 0) - tlp[i]!;
          const cell = el('span', 'tok kl');
          // 0 where the teacher is as sure as the student (or surer), towards 1 as it finds the token unlikely
          cell.style.opacity = String(0.12 + 0.88 * (1 - Math.exp(-Math.max(kl, 0))));
          cell.dataset.kl = kl.toFixed(3);
          cell.title = `token ${i}: id ${tok}, teacher log-prob ${tlp[i]!.toFixed(3)} (p ${Math.exp(tlp[i]!).toFixed(2)}), student ${(logprobs[i] ?? 0).toFixed(3)}, log π_student − log π_teacher ${kl.toFixed(3)}`;
          return cell;
        }),
      );
    }
  } catch (err) {
    if (!abort.signal.aborted) {
      strip.textContent = `Could not load the tokens: ${errorText(err)}`;
      if (text.transcript.isConnected) text.transcript.replaceChildren(el('h3', '', 'Transcript'), el('p', 'negative', `Could not load the episode: ${errorText(err)}`));
    }
  }
}

function onMessage(msg: ToWebview): void {
  if (msg.type === 'snapshot') showSnapshot(msg);
  else messageEl.textContent = msg.message;
}

client.onNotification(onMessage);
textEl.addEventListener('input', () => {
  filter = { ...filter, text: textEl.value };
  saveState();
  void search();
});
errorEl.addEventListener('change', () => {
  filter = { ...filter, rewardError: errorEl.checked };
  applyView();
});
truncEl.addEventListener('change', () => {
  filter = { ...filter, truncated: truncEl.checked };
  applyView();
});
sortEl.addEventListener('change', () => {
  const v = sortEl.value;
  sort = v === 'reward-desc' || v === 'reward-asc' || v === 'spread-desc' || v === 'errors-desc' ? v : 'index';
  applyView();
});
byId('prev').addEventListener('click', () => step(-1));
byId('next').addEventListener('click', () => step(1));
byId('what-changed').addEventListener('click', () => {
  if (snapshot) client.post({ type: 'whatChanged', ref: snapshot.shown });
});
byId('list').addEventListener('keydown', (e) => {
  const move = (to: number) => {
    active = Math.max(0, Math.min(rows.length - 1, to));
    list.scrollIntoView(active);
    byId('list').setAttribute('aria-activedescendant', `row-${active}`);
  };
  if (e.key === 'ArrowDown') move(active + 1);
  else if (e.key === 'ArrowUp') move(active - 1);
  else if (e.key === 'Home') move(0);
  else if (e.key === 'End') move(rows.length - 1);
  else if (e.key === 'PageDown') move(active + 10);
  else if (e.key === 'PageUp') move(active - 10);
  else if (e.key === 'Enter' || e.key === ' ') activate(active);
  else return;
  e.preventDefault();
});
window.addEventListener('keydown', (e) => {
  if (!e.altKey) return;
  if (e.key === 'ArrowLeft') step(-1);
  else if (e.key === 'ArrowRight') step(1);
  else return;
  e.preventDefault();
});

client.ready();
