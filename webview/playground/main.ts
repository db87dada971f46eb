// The sample playground: a conversation editor, sides A and B (a base model or a tinker:// sampler
// checkpoint), sampling parameters and an optional reward file; results appear per side as each
// sample completes, with rewards, the rendered prompt and per-token log-probs on demand, and the
// actions that close the loop (save as reward example, compare A↔B, copy as JSON). The host keeps
// the form and the history; this page only shows and edits them.
import '../shared/base.css';
import './playground.css';
import { PanelClient } from '../shared/client';
import { byId, el, inputById, replaceChildrenWith, typedById } from '../shared/dom';
import { applyRunUpdate, ChatMessage, continueWith, DEFAULT_PARAMS, EDITOR_ROLES, PlaygroundForm, PlaygroundProtocol, RunView, SampleView, SideId, SideResult, SideSource, sourceLabel, ToWebview } from '../../src/protocol/playgroundProtocol';
import { errorText } from '../../src/protocol/panelProtocol';
import type { ToolCall } from '../../src/protocol/chatMessage';
import { formatToolCall, hasStructure, thinkingSummary } from '../../src/protocol/messageFormat';
import { messageView, toolCallView } from '../shared/messageView';
import { PreferenceBar } from './preferences';

const client = new PanelClient(PlaygroundProtocol);
client.setState({ kind: 'playground' });

const app = byId('app');
app.innerHTML = `
  <header class="top">
    <h1>Sample Playground</h1>
    <span id="status" class="muted" role="status" aria-live="polite"></span>
  </header>
  <section class="form" aria-label="Prompt and parameters">
    <div class="sides">
      <label>Side A <input id="side-A" list="sources" placeholder="base model or tinker://… sampler path" aria-label="Side A: base model or sampler checkpoint"></label>
      <label>Side B <input id="side-B" list="sources" placeholder="optional: another model or checkpoint" aria-label="Side B: base model or sampler checkpoint (optional)"></label>
      <datalist id="sources"></datalist>
    </div>
    <div id="models-note" class="muted"></div>
    <fieldset class="conversation">
      <legend>Conversation</legend>
      <div id="messages"></div>
      <button id="add-message" class="secondary" type="button">Add message</button>
      <button id="pick-problem" class="secondary" type="button" title="Fill the conversation and ground truth from a run's dataset">Pick a problem…</button>
    </fieldset>
    <div class="row">
      <label>Ground truth <input id="ground-truth" placeholder="for the reward (optional)"></label>
      <label>Reward file <select id="reward-file"></select></label>
      <button id="pick-reward" class="secondary" type="button">Browse…</button>
    </div>
    <div class="row params" role="group" aria-label="Sampling parameters">
      <label>temperature <input id="p-temperature" type="number" min="0" max="5" step="0.05"></label>
      <label>top_p <input id="p-top-p" type="number" min="0.01" max="1" step="0.05"></label>
      <label>top_k <input id="p-top-k" type="number" min="-1" step="1" title="-1: no cut"></label>
      <label>max_tokens <input id="p-max-tokens" type="number" min="1" max="16384" step="1"></label>
      <label>N <input id="p-n" type="number" min="1" max="64" step="1"></label>
      <label>seed <input id="p-seed" type="number" min="0" step="1" placeholder="none"></label>
      <label>stop <input id="p-stop" placeholder="the renderer's" title="comma-separated strings; empty: the renderer's stop sequences"></label>
    </div>
    <div class="row actions">
      <button id="run" type="button" title="Sample (Ctrl+Enter)">Sample</button>
      <button id="cancel" class="secondary" type="button" disabled>Cancel</button>
      <button id="show-prompt" class="secondary" type="button">Rendered prompt</button>
      <button id="copy-run" class="secondary" type="button">Copy run as JSON</button>
      <label>History <select id="history" aria-label="Earlier runs"></select></label>
    </div>
    <p id="form-error" class="negative" role="alert"></p>
    <pre id="prompt-view" class="prompt-view" hidden tabindex="0" aria-label="Rendered prompt"></pre>
  </section>
  <p id="reward-note" class="muted"></p>
  <section class="results" aria-label="Results">
    <div class="side" id="result-A" aria-label="Side A results"></div>
    <div class="side" id="result-B" aria-label="Side B results"></div>
  </section>`;

const sideInput = { A: inputById('side-A'), B: inputById('side-B') };
const messagesEl = byId('messages');
const groundTruthEl = inputById('ground-truth');
const rewardSelect = typedById('reward-file', HTMLSelectElement);
const historySelect = typedById('history', HTMLSelectElement);
const statusEl = byId('status');
const formError = byId('form-error');
const promptView = byId('prompt-view');
const rewardNote = byId('reward-note');
const runButton = typedById('run', HTMLButtonElement);
const cancelButton = typedById('cancel', HTMLButtonElement);
const param = {
  temperature: inputById('p-temperature'),
  topP: inputById('p-top-p'),
  topK: inputById('p-top-k'),
  maxTokens: inputById('p-max-tokens'),
  n: inputById('p-n'),
  seed: inputById('p-seed'),
  stop: inputById('p-stop'),
};

let run: RunView | undefined;
// preference collection (A better / B better → the preferences file), above the results
const preferences = new PreferenceBar((m) => client.post(m));
document.querySelector('section.results')?.before(preferences.el);
let rewardFiles: string[] = [];

// nothing is typed before the host's snapshot fills the form (it would be overwritten)
const formControls = () => [...document.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement | HTMLButtonElement>('.form input, .form select, .form textarea, .form button')];
for (const c of formControls()) c.disabled = true;
byId('app').setAttribute('aria-busy', 'true');


// ---------- the form ----------

function sourceText(s: SideSource | undefined): string {
  return s ? sourceLabel(s) : '';
}
function sourceOf(text: string): SideSource | undefined {
  const t = text.trim();
  if (!t) return undefined;
  return t.startsWith('tinker://') ? { kind: 'checkpoint', path: t } : { kind: 'base', model: t };
}

/** The tool calls of an assistant row (kept as the reply gave them; shown formatted, not edited). */
const rowCalls = new WeakMap<HTMLElement, ToolCall[]>();

/**
 * One message of the conversation: its role, its text, and what the role adds: an assistant turn's
 * reasoning (folded, editable) and tool calls (formatted, removable), a tool result's call id and
 * function name. Switching the role shows that role's fields.
 */
function messageRow(m: ChatMessage): HTMLElement {
  const row = el('div', 'message');
  row.dataset.role = m.role;
  const role = document.createElement('select');
  role.className = 'role';
  role.setAttribute('aria-label', 'Role');
  const roles: readonly string[] = EDITOR_ROLES.includes(m.role as (typeof EDITOR_ROLES)[number]) ? EDITOR_ROLES : [...EDITOR_ROLES, m.role];
  for (const r of roles) role.append(new Option(r, r, false, r === m.role));
  role.addEventListener('change', () => {
    row.dataset.role = role.value;
  });
  const body = el('div', 'message-body');
  const text = document.createElement('textarea');
  text.className = 'content';
  text.rows = 2;
  text.value = m.content;
  text.setAttribute('aria-label', 'Message text');
  // an assistant turn's reasoning, folded like a sample's
  const thinking = el('details', 'thinking-edit assistant-only');
  thinking.open = false;
  const thinkingSum = el('summary', '', m.thinking ? thinkingSummary(m.thinking) : 'Thinking (optional)');
  const thinkingText = document.createElement('textarea');
  thinkingText.className = 'thinking';
  thinkingText.rows = 3;
  thinkingText.value = m.thinking ?? '';
  thinkingText.setAttribute('aria-label', 'Reasoning of this assistant message');
  thinkingText.addEventListener('input', () => (thinkingSum.textContent = thinkingText.value ? thinkingSummary(thinkingText.value) : 'Thinking (optional)'));
  thinking.append(thinkingSum, thinkingText);
  const calls = el('div', 'calls assistant-only');
  const showCalls = (list: ToolCall[]) => {
    rowCalls.set(row, list);
    calls.replaceChildren(...list.map((c) => toolCallView(formatToolCall(c))));
    if (list.length) {
      const drop = el('button', 'secondary small', 'Remove the tool calls');
      drop.type = 'button';
      drop.addEventListener('click', () => {
        showCalls([]);
        formChanged();
      });
      calls.append(drop);
    }
  };
  showCalls(m.tool_calls ?? []);
  // a tool result: which call it answers
  const toolMeta = el('div', 'tool-meta tool-only');
  const callId = document.createElement('input');
  callId.className = 'call-id';
  callId.placeholder = 'call id (if the call had one)';
  callId.value = m.tool_call_id ?? '';
  callId.setAttribute('aria-label', 'Tool call id this result answers');
  const fnName = document.createElement('input');
  fnName.className = 'fn-name';
  fnName.placeholder = 'function name';
  fnName.value = m.name ?? '';
  fnName.setAttribute('aria-label', 'Function name of the call this result answers');
  toolMeta.append(el('span', 'muted', 'result of'), fnName, callId);
  // the text comes first in the DOM (the first textarea of a row); CSS shows the reasoning and the tool result's call above it
  body.append(text, thinking, calls, toolMeta);
  const remove = el('button', 'secondary icon', '✕');
  remove.type = 'button';
  remove.title = 'Remove this message';
  remove.setAttribute('aria-label', 'Remove this message');
  remove.addEventListener('click', () => {
    if (messagesEl.children.length > 1) row.remove();
    formChanged();
  });
  row.append(role, body, remove);
  return row;
}

/** A message row as a message: the fields its role has, the empty ones left out. */
function rowMessage(row: Element): Record<string, unknown> {
  const value = (sel: string) => row.querySelector<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>(sel)?.value ?? '';
  const role = value('select.role') || 'user';
  const m: Record<string, unknown> = { role, content: value('textarea.content') };
  if (role === 'assistant') {
    const thinking = value('textarea.thinking');
    if (thinking) m['thinking'] = thinking;
    const calls = row instanceof HTMLElement ? rowCalls.get(row) : undefined;
    if (calls?.length) m['tool_calls'] = calls;
  } else if (role === 'tool') {
    if (value('input.call-id').trim()) m['tool_call_id'] = value('input.call-id').trim();
    if (value('input.fn-name').trim()) m['name'] = value('input.fn-name').trim();
  }
  return m;
}

function showForm(f: PlaygroundForm): void {
  sideInput.A.value = sourceText(f.A);
  sideInput.B.value = sourceText(f.B);
  messagesEl.replaceChildren(...f.messages.map(messageRow));
  groundTruthEl.value = f.groundTruth ?? '';
  showRewardFiles(f.rewardFile);
  param.temperature.value = String(f.params.temperature);
  param.topP.value = String(f.params.topP);
  param.topK.value = String(f.params.topK);
  param.maxTokens.value = String(f.params.maxTokens);
  param.n.value = String(f.params.n);
  param.seed.value = f.params.seed === undefined ? '' : String(f.params.seed);
  param.stop.value = f.params.stop?.join(', ') ?? '';
}

function showRewardFiles(current: string | undefined): void {
  const files = [...new Set([...rewardFiles, ...(current ? [current] : [])])];
  rewardSelect.replaceChildren(new Option('(no rewards)', ''), ...files.map((f) => new Option(f, f, false, f === current)));
  rewardSelect.value = current ?? '';
}

function num(input: HTMLInputElement, fallback: number): number {
  const v = input.valueAsNumber;
  return Number.isFinite(v) ? v : fallback;
}

/** The form as typed, checked with the protocol's schema. */
function readForm(): { ok: true; form: PlaygroundForm } | { ok: false; error: string } {
  const messages = [...messagesEl.querySelectorAll('.message')].map(rowMessage);
  const seed = param.seed.value.trim() === '' ? undefined : num(param.seed, 0);
  const stop = param.stop.value.split(',').map((s) => s.trim()).filter(Boolean);
  const A = sourceOf(sideInput.A.value);
  const B = sourceOf(sideInput.B.value);
  const parsed = PlaygroundForm.safeParse({
    messages,
    ...(groundTruthEl.value !== '' ? { groundTruth: groundTruthEl.value } : {}),
    ...(A ? { A } : {}),
    ...(B ? { B } : {}),
    ...(rewardSelect.value ? { rewardFile: rewardSelect.value } : {}),
    params: {
      temperature: num(param.temperature, DEFAULT_PARAMS.temperature),
      topP: num(param.topP, DEFAULT_PARAMS.topP),
      topK: num(param.topK, DEFAULT_PARAMS.topK),
      maxTokens: num(param.maxTokens, DEFAULT_PARAMS.maxTokens),
      n: num(param.n, DEFAULT_PARAMS.n),
      ...(seed !== undefined ? { seed } : {}),
      ...(stop.length ? { stop } : {}),
    },
  });
  if (parsed.success) return { ok: true, form: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, error: issue ? `${issue.path.join('.') || 'form'}: ${issue.message}` : 'the form is not valid' };
}

let saveTimer = 0;
function formChanged(): void {
  clearTimeout(saveTimer);
  saveTimer = window.setTimeout(() => {
    const f = readForm();
    if (f.ok) client.post({ type: 'saveForm', form: f.form });
  }, 400);
}
byId('app').addEventListener('input', (e) => {
  if (e.target instanceof Element && e.target.closest('.form')) formChanged();
});
messagesEl.addEventListener('change', (e) => {
  if (e.target instanceof HTMLSelectElement) formChanged();
});
rewardSelect.addEventListener('change', formChanged);

byId('add-message').addEventListener('click', () => {
  const row = messageRow({ role: 'user', content: '' });
  messagesEl.append(row);
  row.querySelector('textarea')?.focus();
  formChanged();
});
byId('pick-reward').addEventListener('click', () => client.post({ type: 'pickRewardFile' }));
byId('pick-problem').addEventListener('click', () => client.post({ type: 'pickProblem' }));

function startRun(): void {
  const f = readForm();
  formError.textContent = f.ok ? '' : f.error;
  if (!f.ok) return;
  if (!f.form.A && !f.form.B) {
    formError.textContent = 'Choose a model or a checkpoint for side A.';
    return;
  }
  client.post({ type: 'run', form: f.form });
}
runButton.addEventListener('click', startRun);
cancelButton.addEventListener('click', () => client.post({ type: 'cancel' }));
document.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    startRun();
  } else if (e.key === 'Escape' && run?.status === 'running') client.post({ type: 'cancel' });
});
byId('copy-run').addEventListener('click', () => client.post({ type: 'copyJson' }));
historySelect.addEventListener('change', () => {
  if (historySelect.value) client.post({ type: 'showHistory', id: historySelect.value });
});

byId('show-prompt').addEventListener('click', async () => {
  if (!promptView.hidden) {
    promptView.hidden = true;
    return;
  }
  const f = readForm();
  const source = f.ok ? (f.form.A ?? f.form.B) : undefined;
  if (!f.ok || !source) {
    formError.textContent = f.ok ? 'Choose a model for side A to render the prompt with its renderer.' : f.error;
    return;
  }
  promptView.hidden = false;
  promptView.textContent = 'Rendering…';
  try {
    const r = await client.request('renderedPrompt', { source, messages: f.form.messages });
    promptView.textContent = `renderer ${r.renderer} (${r.baseModel}) · ${r.tokens} prompt tokens\n\n${r.text}`;
  } catch (err) {
    promptView.textContent = errorText(err);
  }
});

// ---------- results ----------

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(3);
}

function showRun(): void {
  const running = run?.status === 'running';
  runButton.disabled = running;
  cancelButton.disabled = !running;
  rewardNote.textContent = run?.rewardNote ?? '';
  statusEl.textContent = !run ? '' : running ? 'Sampling…' : run.status === 'cancelled' ? 'Cancelled.' : `Done · ${new Date(run.startedAt).toLocaleTimeString()}`;
  for (const side of ['A', 'B'] as const) showSide(side, run?.sides[side]);
  preferences.update(run);
}

function showSide(side: SideId, r: SideResult | undefined): void {
  const box = byId(`result-${side}`);
  box.hidden = !r;
  if (!r || !run) return box.replaceChildren();
  const head = el('div', 'side-head');
  head.append(el('h2', '', `Side ${side}`), el('div', 'meta', sourceText(run.form[side])));
  if (r.info) head.append(el('div', 'meta', `${r.info.renderer} renderer · ${r.info.promptTokens} prompt tokens`));
  const n = run.form.params.n;
  const stats = el('div', 'stats', `${r.samples.length}/${n} samples`);
  if (r.meanReward !== undefined) stats.append(el('strong', 'mean', ` · mean reward ${fmt(r.meanReward)}`));
  head.append(stats);
  const errors = r.errors.map((m) => el('div', 'negative side-error', m));
  box.replaceChildren(head, ...errors, ...r.samples.map((s) => sampleCard(s)));
}

function sampleCard(s: SampleView): HTMLElement {
  const card = el('article', 'sample');
  card.dataset.side = s.side;
  card.dataset.index = String(s.index);
  card.setAttribute('aria-label', `Side ${s.side} sample ${s.index}`);
  const head = el('div', 'sample-head');
  head.append(el('strong', '', `#${s.index}`), el('span', 'muted', ` ${s.stopReason} · ${s.tokens} tokens · ${(s.ms / 1000).toFixed(2)} s`));
  if (s.reward !== undefined) head.append(el('span', s.reward > 0 ? 'reward positive' : 'reward', ` reward ${fmt(s.reward)}`));
  if (s.termination === 'malformed') head.append(el('span', 'flag-warning', ' · no stop token: parsed as cut off'));
  const reply = s.message ? { role: 'assistant' as const, ...s.message } : undefined;
  // a reply with reasoning or tool calls shows them (reasoning folded, calls formatted); a plain one as written
  card.append(head, reply && hasStructure(reply) ? messageView(reply, { emptyText: '(no text)' }) : el('pre', 'completion', s.text || '(empty)'));
  if (s.rewardError) {
    const err = el('div', 'negative reward-error');
    err.append(el('span', '', `${s.rewardError.kind}: ${s.rewardError.message} `));
    const open = el('button', 'link', s.rewardError.line ? `reward file line ${s.rewardError.line}` : 'open reward file');
    open.type = 'button';
    open.addEventListener('click', () => client.post({ type: 'openRewardFile', ...(s.rewardError?.line ? { line: s.rewardError.line } : {}) }));
    err.append(open);
    if (s.rewardError.traceback) {
      const tb = el('details');
      tb.append(el('summary', '', 'traceback'), el('pre', '', s.rewardError.traceback));
      err.append(tb);
    }
    card.append(err);
  }
  const actions = el('div', 'sample-actions');
  const act = (label: string, onClick: () => void) => {
    const b = el('button', 'secondary small', label);
    b.type = 'button';
    b.addEventListener('click', onClick);
    actions.append(b);
    return b;
  };
  const strip = el('div', 'tokens');
  strip.hidden = true;
  act('Log-probs', () => void toggleTokens(s, strip));
  if (run?.form.rewardFile && run.form.groundTruth !== undefined) {
    act('Save as reward example', () => client.post({ type: 'saveExample', side: s.side, index: s.index, expected: s.reward ?? 0 }));
  }
  const other: SideId = s.side === 'A' ? 'B' : 'A';
  if (run?.sides[other]?.samples.some((x) => x.index === s.index)) {
    act(s.side === 'A' ? 'Compare A↔B' : 'Compare B↔A', () => client.post({ type: 'compare', left: { side: 'A', index: s.index }, right: { side: 'B', index: s.index } }));
  }
  act('Copy as JSON', () => client.post({ type: 'copyJson', side: s.side, index: s.index }));
  const cont = act('Continue from this reply', () => continueFrom(s));
  cont.title = s.message?.tool_calls?.length
    ? 'Add this reply (its reasoning and tool calls) to the conversation, with a tool result to fill in for each call'
    : 'Add this reply to the conversation, with a user message to write next';
  card.append(actions, strip);
  return card;
}

/** Appends the sample's reply (and a tool result per call, or a user turn) to the conversation; focuses the first to fill in. */
function continueFrom(s: SampleView): void {
  const f = readForm();
  const current = f.ok ? f.form.messages : [...messagesEl.querySelectorAll('.message')].map((r) => rowMessage(r) as ChatMessage);
  const next = continueWith(current, s.message ?? { content: s.text });
  const rows = next.slice(current.length).map(messageRow);
  messagesEl.append(...rows);
  rows.at(-1)?.scrollIntoView({ block: 'nearest' });
  rows.find((r) => r.dataset.role !== 'assistant')?.querySelector<HTMLTextAreaElement>('textarea.content')?.focus();
  formChanged();
}

async function toggleTokens(s: SampleView, strip: HTMLElement): Promise<void> {
  if (!strip.hidden) {
    strip.hidden = true;
    return;
  }
  strip.hidden = false;
  strip.textContent = 'Loading…';
  try {
    const r = await client.request('sampleTokens', { side: s.side, index: s.index });
    replaceChildrenWith(
      strip,
      r.tokens.map((t) => {
        const span = el('span', 'token', t.text);
        const lp = t.logprob;
        span.title = lp === null ? 'no log-prob' : `log-prob ${lp.toFixed(3)} (p = ${Math.exp(lp).toFixed(3)})`;
        // more opaque where the model was less sure
        if (lp !== null) span.style.setProperty('--unsure', String(Math.min(1, -lp / 5)));
        return span;
      }),
    );
  } catch (err) {
    strip.textContent = errorText(err);
  }
}

function showHistory(items: Array<{ id: string; startedAt: string; label: string }>): void {
  historySelect.replaceChildren(new Option('(choose a run)', ''), ...items.map((h) => new Option(`${new Date(h.startedAt).toLocaleString()} — ${h.label}`, h.id)));
}

client.onNotification((m: ToWebview) => {
  switch (m.type) {
    case 'snapshot':
      rewardFiles = m.rewardFiles;
      showForm(m.form);
      for (const c of formControls()) c.disabled = false;
      byId('app').removeAttribute('aria-busy');
      byId('sources').replaceChildren(...m.checkpoints.map((c) => new Option(c.label, c.path)));
      showHistory(m.history);
      run = m.run;
      showRun();
      break;
    case 'models': {
      const list = byId('sources');
      for (const model of m.models) list.prepend(new Option(model, model));
      byId('models-note').textContent = m.error ? `Could not list the server's models: ${m.error}` : '';
      break;
    }
    case 'form':
      rewardFiles = [...new Set([...rewardFiles, ...(m.form.rewardFile ? [m.form.rewardFile] : [])])];
      showForm(m.form);
      break;
    case 'runStarted':
      run = m.run;
      showRun();
      break;
    case 'side':
    case 'sample':
    case 'sideError':
      if (run) applyRunUpdate(run, m);
      showRun();
      break;
    case 'runDone':
      run = m.run;
      showHistory(m.history);
      showRun();
      break;
    case 'error':
      formError.textContent = m.message;
      break;
    case 'preferenceSaved':
      preferences.saved(m);
      break;
  }
});

client.ready();
