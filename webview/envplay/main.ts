// Play as the Model: choose an environment file and the dataset line its class is constructed from
// (a line of a JSONL file, or typed), start an episode, and type the assistant's replies; each turn
// shows what the environment said, your reply as the renderer parsed it (tool calls formatted), the
// step's reward, metrics and logs; the end says why and the total. The same view shows an episode
// the model played (Dry Run Episode). The host runs the environment; this page only shows the
// episode and sends the form and the replies.
import '../shared/base.css';
import './envplay.css';
import { PanelClient } from '../shared/client';
import { byId, el, inputById, typedById } from '../shared/dom';
import { messageView } from '../shared/messageView';
import { EnvPlayForm, EnvPlayProtocol, formatStepReward, stopText, type EnvPlayView, type ToWebview } from '../../src/protocol/envPlayProtocol';
import type { ChatMessage } from '../../src/protocol/chatMessage';
import type { TranscriptTurn } from '../../src/protocol/sampleSchema';

const client = new PanelClient(EnvPlayProtocol);
client.setState({ kind: 'envPlay' });

const app = byId('app');
app.innerHTML = `
  <header class="top">
    <h1>Play as the Model</h1>
    <span id="status" class="muted" role="status" aria-live="polite"></span>
  </header>
  <p id="trust-note" class="negative" hidden>Environment code is not run in an untrusted workspace: trust the workspace to play.</p>
  <section class="form" aria-label="Environment and dataset line">
    <div class="row">
      <label>Environment <select id="env-file" aria-label="Environment file"></select></label>
      <button id="pick-env" class="secondary" type="button">Browse…</button>
      <label>Class <input id="class-name" placeholder="the file's one class" aria-label="Class (when the file defines several)"></label>
    </div>
    <fieldset class="problem">
      <legend>Dataset line (the class is constructed from it)</legend>
      <div class="row">
        <label><input type="radio" name="problem-kind" id="kind-line" value="line"> From a dataset</label>
        <select id="dataset" aria-label="Dataset file (JSONL)"></select>
        <button id="pick-dataset" class="secondary" type="button">Browse…</button>
        <label>line <input id="line" type="number" min="1" step="1" aria-label="Line number in the dataset"></label>
      </div>
      <div class="row">
        <label><input type="radio" name="problem-kind" id="kind-text" value="text"> Typed</label>
        <textarea id="problem-text" rows="2" placeholder='{"x": 24, "y": 51}' aria-label="The dataset line, typed (JSON; other text is passed as a string)"></textarea>
      </div>
    </fieldset>
    <div class="row">
      <label>Model <input id="model" aria-label="Model whose renderer parses your replies"></label>
      <label>Renderer <select id="renderer" aria-label="Renderer"></select></label>
      <button id="start" type="button">Start episode</button>
      <button id="stop" class="secondary" type="button" disabled>Stop</button>
    </div>
    <p id="form-error" class="negative" role="alert"></p>
  </section>
  <section id="episode" aria-label="Episode" hidden>
    <div id="episode-head" class="episode-head"></div>
    <ol id="transcript" class="transcript" aria-label="Transcript"></ol>
    <div id="ending" class="ending" role="status"></div>
    <div id="reply-box" class="reply-box" hidden>
      <label for="reply">Your reply, as the assistant <span class="muted">(Ctrl+Enter sends; tool calls in the renderer's format)</span></label>
      <textarea id="reply" rows="3"></textarea>
      <div class="row"><button id="send" type="button">Send reply</button></div>
    </div>
  </section>`;

const envSelect = typedById('env-file', HTMLSelectElement);
const classInput = inputById('class-name');
const kindLine = inputById('kind-line');
const kindText = inputById('kind-text');
const datasetSelect = typedById('dataset', HTMLSelectElement);
const lineInput = inputById('line');
const problemText = typedById('problem-text', HTMLTextAreaElement);
const modelInput = inputById('model');
const rendererSelect = typedById('renderer', HTMLSelectElement);
const startButton = typedById('start', HTMLButtonElement);
const stopButton = typedById('stop', HTMLButtonElement);
const formError = byId('form-error');
const statusEl = byId('status');
const episodeEl = byId('episode');
const headEl = byId('episode-head');
const transcriptEl = byId('transcript');
const endingEl = byId('ending');
const replyBox = byId('reply-box');
const replyInput = typedById('reply', HTMLTextAreaElement);
const sendButton = typedById('send', HTMLButtonElement);

let view: EnvPlayView | undefined;
let trusted = true;

// ---------- the form ----------

function options(select: HTMLSelectElement, values: readonly string[], selected: string | undefined, label: (v: string) => string, empty?: string): void {
  select.replaceChildren();
  if (empty !== undefined) select.append(new Option(empty, ''));
  const all = selected && !values.includes(selected) ? [selected, ...values] : values;
  for (const v of all) select.append(new Option(label(v), v, false, v === selected));
  if (selected !== undefined) select.value = selected;
}

const baseName = (p: string) => p.split(/[\\/]/).pop() ?? p;
/** the path relative to the common folder of the choices, to tell files of the same name apart */
const shortName = (p: string, all: readonly string[]) => (all.filter((o) => baseName(o) === baseName(p)).length > 1 ? p.split(/[\\/]/).slice(-2).join('/') : baseName(p));

function fillForm(form: EnvPlayForm, envFiles?: readonly string[], datasets?: readonly string[]): void {
  if (envFiles) options(envSelect, envFiles, form.envFile, (v) => shortName(v, envFiles), '(choose an environment file)');
  else if (form.envFile && envSelect.value !== form.envFile) options(envSelect, [...envSelect.options].map((o) => o.value).filter(Boolean), form.envFile, baseName, '(choose an environment file)');
  classInput.value = form.className ?? '';
  if (datasets) options(datasetSelect, datasets, form.problem.kind === 'line' ? form.problem.file : undefined, baseName, datasets.length ? undefined : '(no JSONL file beside the env: Browse…)');
  kindLine.checked = form.problem.kind === 'line';
  kindText.checked = form.problem.kind === 'text';
  if (form.problem.kind === 'line') {
    lineInput.value = String(form.problem.line);
    if (datasetSelect.value !== form.problem.file) options(datasetSelect, [...datasetSelect.options].map((o) => o.value).filter(Boolean), form.problem.file, baseName);
  } else problemText.value = form.problem.text;
  modelInput.value = form.model;
  if (form.renderer !== undefined) rendererSelect.value = form.renderer;
  else rendererSelect.value = '';
  syncKind();
}

function syncKind(): void {
  const line = kindLine.checked;
  datasetSelect.disabled = !line;
  lineInput.disabled = !line;
  problemText.disabled = line;
}

/** The form as typed; undefined (with the reason shown) when it is not usable. */
function readForm(): EnvPlayForm | undefined {
  const problem = kindLine.checked ? { kind: 'line' as const, file: datasetSelect.value, line: Number(lineInput.value) } : { kind: 'text' as const, text: problemText.value };
  const candidate = {
    ...(envSelect.value ? { envFile: envSelect.value } : {}),
    ...(classInput.value.trim() ? { className: classInput.value.trim() } : {}),
    problem,
    model: modelInput.value.trim(),
    ...(rendererSelect.value ? { renderer: rendererSelect.value } : {}),
  };
  const parsed = EnvPlayForm.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') ?? '';
    formError.textContent = where.startsWith('problem') ? (kindLine.checked ? 'Choose a dataset file and a line number (1 or more).' : 'Type the dataset line.') : where === 'model' ? 'Give the model whose renderer parses your replies.' : (issue?.message ?? 'The form is not complete.');
    return undefined;
  }
  formError.textContent = '';
  return parsed.data;
}

function saveForm(): void {
  const form = readForm();
  if (form) client.post({ type: 'saveForm', form });
}

for (const c of [envSelect, classInput, datasetSelect, lineInput, problemText, modelInput, rendererSelect]) c.addEventListener('change', saveForm);
for (const r of [kindLine, kindText]) r.addEventListener('change', () => {
  syncKind();
  saveForm();
});
byId('pick-env').addEventListener('click', () => client.post({ type: 'pickEnvFile' }));
byId('pick-dataset').addEventListener('click', () => client.post({ type: 'pickDataset' }));
startButton.addEventListener('click', () => {
  if (!envSelect.value) {
    formError.textContent = 'Choose an environment file.';
    envSelect.focus();
    return;
  }
  const form = readForm();
  if (form) client.post({ type: 'start', form });
});
stopButton.addEventListener('click', () => client.post({ type: 'stop' }));

// ---------- the reply ----------

function send(): void {
  if (view?.status !== 'awaiting' || view.player !== 'you') return;
  client.post({ type: 'reply', text: replyInput.value });
  replyInput.value = '';
  sendButton.disabled = true;
  statusEl.textContent = 'The environment is stepping…';
}
sendButton.addEventListener('click', send);
replyInput.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    send();
  }
});

// ---------- the episode ----------

function messageItem(m: ChatMessage, who?: string): HTMLElement {
  const li = el('li', `turn-msg role-${m.role}`);
  const box = messageView(m, { showRole: true });
  if (who) box.querySelector('.msg-role')?.append(el('span', 'who', ` · ${who}`));
  li.append(box);
  return li;
}

function metricsText(metrics: Record<string, number>): string {
  return Object.entries(metrics)
    .map(([k, v]) => `${k} ${Number.isInteger(v) ? v : v.toFixed(3)}`)
    .join(' · ');
}

function stepItem(t: TranscriptTurn, index: number): HTMLElement {
  const li = el('li', 'step');
  li.setAttribute('aria-label', `Step ${index + 1}: reward ${formatStepReward(t.reward)}${t.episode_done ? ', episode done' : ''}`);
  const reward = el('span', `reward ${t.reward > 0 ? 'positive' : t.reward < 0 ? 'negative' : ''}`, `reward ${formatStepReward(t.reward)}`);
  li.append(el('span', 'step-label muted', `step ${index + 1}`), reward);
  const metrics = metricsText(t.metrics);
  if (metrics) li.append(el('span', 'metrics', metrics));
  if (t.episode_done) li.append(el('span', 'done-flag', 'episode done'));
  if (t.parse_error) li.append(el('div', 'msg-flag', `⚠ parse failure: ${t.parse_error}`));
  if (t.logs && Object.keys(t.logs).length) li.append(el('div', 'logs muted', `logs: ${Object.entries(t.logs).map(([k, v]) => `${k}=${v}`).join(', ')}`));
  return li;
}

function render(): void {
  const v = view;
  episodeEl.hidden = v === undefined;
  const playing = v !== undefined && (v.status === 'starting' || v.status === 'awaiting');
  stopButton.disabled = !playing;
  startButton.textContent = v && !playing ? 'Restart episode' : 'Start episode';
  startButton.disabled = !trusted;
  if (!v) {
    statusEl.textContent = '';
    return;
  }
  const who = v.player === 'you' ? 'you' : (v.model ?? 'the model');
  headEl.replaceChildren(
    el('span', 'chip', v.className || 'environment'),
    el('span', 'muted', `${baseName(v.envFile)} · renderer ${v.renderer || '…'} · ${v.player === 'you' ? 'you play the model' : `played by ${who}`}`),
    el('span', 'total', `total reward ${formatStepReward(v.total)}`),
  );
  const problem = el('details', 'problem-line');
  problem.append(el('summary', '', 'Dataset line'), el('pre', '', v.problem));
  headEl.append(problem);
  if (v.tools?.length) headEl.append(el('div', 'muted', `Tools: ${v.tools.map((t) => t.name).join(', ')}`));
  const items: HTMLElement[] = [];
  v.turns.forEach((t, i) => {
    if (t.reset) items.push(el('li', 'reset muted', 'The environment rewrote the conversation:'));
    for (const m of t.new_messages) items.push(messageItem(m));
    items.push(messageItem(t.reply, who));
    items.push(stepItem(t, i));
  });
  if (v.pending) {
    if (v.pending.reset) items.push(el('li', 'reset muted', 'The environment rewrote the conversation:'));
    for (const m of v.pending.messages) items.push(messageItem(m));
  }
  for (const m of v.trailing ?? []) items.push(messageItem(m));
  transcriptEl.replaceChildren(...items);
  endingEl.replaceChildren();
  endingEl.className = 'ending';
  if (v.status === 'done') {
    endingEl.classList.add('done');
    endingEl.append(el('strong', '', `Episode done — total reward ${formatStepReward(v.total)}`), el('span', 'muted', ` (${stopText(v.stop)}; ${v.turns.length} turn${v.turns.length === 1 ? '' : 's'})`));
    if (v.group) endingEl.append(el('div', 'muted', 'reward' in v.group ? `compute_group_rewards: ${formatStepReward(v.group.reward)}${Object.keys(v.group.metrics).length ? ` · ${metricsText(v.group.metrics)}` : ''}` : `compute_group_rewards failed: ${v.group.error}`));
  } else if (v.status === 'cancelled') endingEl.append(el('span', 'muted', 'Stopped.'));
  if (v.error) {
    endingEl.classList.add('failed');
    endingEl.append(el('div', 'negative', `${v.error.where}: ${v.error.kind}: ${v.error.message}`));
    if (v.error.traceback) endingEl.append(el('pre', 'traceback', v.error.traceback));
    const line = v.error.line;
    const open = el('button', 'link', line ? `Open ${baseName(v.envFile)} at line ${line}` : `Open ${baseName(v.envFile)}`);
    open.type = 'button';
    open.addEventListener('click', () => client.post({ type: 'openEnvFile', ...(line ? { line } : {}) }));
    if (v.envFile) endingEl.append(open);
  }
  const awaitingYou = v.status === 'awaiting' && v.player === 'you';
  const wasHidden = replyBox.hidden;
  replyBox.hidden = !awaitingYou;
  sendButton.disabled = !awaitingYou;
  statusEl.textContent =
    v.status === 'starting' ? 'Starting the environment…' : v.status === 'awaiting' ? (v.player === 'you' ? `Turn ${v.turns.length + 1}: your reply` : `Turn ${v.turns.length + 1}: the model is replying…`) : v.status === 'done' ? 'Episode done' : v.status === 'cancelled' ? 'Stopped' : 'Failed';
  if (awaitingYou && (wasHidden || document.activeElement === sendButton || document.activeElement === document.body)) replyInput.focus();
  replyBox.scrollIntoView({ block: 'nearest' });
}

client.onNotification((m: ToWebview) => {
  switch (m.type) {
    case 'snapshot':
      trusted = m.trusted;
      byId('trust-note').hidden = m.trusted;
      options(rendererSelect, m.renderers, m.form.renderer ?? '', (r) => r, "(the model's)");
      fillForm(m.form, m.envFiles, m.datasets);
      view = m.view;
      render();
      break;
    case 'form':
      fillForm(m.form, undefined, m.datasets);
      break;
    case 'view':
      view = m.view;
      formError.textContent = '';
      render();
      break;
    case 'error':
      formError.textContent = m.message;
      break;
  }
});
client.ready();
