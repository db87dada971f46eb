// The Preference Pairs panel: every pair of a file or a DPO run — prompt, chosen, rejected, and for a
// run the implicit reward margin β·(ρ_chosen − ρ_rejected) when first measured and now — sortable
// (mis-ranked pairs first by default), filtered by text, live while the run writes margins. A pair
// opens in the native diff editor on click or Enter; ↑/↓ (and Home/End) move between pairs.
import '../shared/base.css';
import './pairs.css';
import { PanelClient } from '../shared/client';
import { byId, el, frameScheduler, inputById } from '../shared/dom';
import { applyMargins, orderPairs, pairCounts, PairRow, PairSort, PairsProtocol, ToWebview } from '../../src/protocol/pairsProtocol';

const client = new PanelClient(PairsProtocol);
/** rows drawn at most at once (the filter narrows the rest) */
const MAX_ROWS = 400;

const app = document.getElementById('app');
if (!app) throw new Error('pairs panel: #app is missing');
app.innerHTML = `
  <header class="head">
    <div class="title-row"><h1 id="title">Preference Pairs</h1><span id="live" class="live" hidden>live</span></div>
    <div class="meta" id="meta"></div>
  </header>
  <div class="controls">
    <label for="filter">Filter</label>
    <input type="search" id="filter" placeholder="words in the prompt or a completion" aria-describedby="counts" />
    <label for="sort">Sort</label>
    <select id="sort">
      <option value="misranked">Mis-ranked first (margin ascending)</option>
      <option value="margin-desc">Best ranked first</option>
      <option value="change">Largest gain since the start</option>
      <option value="file">File order</option>
    </select>
    <button id="open-file" type="button" class="secondary">Open Pairs File</button>
  </div>
  <p id="counts" class="counts" role="status"></p>
  <p id="message" class="message" role="alert"></p>
  <table class="pairs" aria-label="Preference pairs" aria-describedby="hint">
    <thead><tr><th scope="col">Pair</th><th scope="col">Prompt</th><th scope="col">Chosen</th><th scope="col">Rejected</th><th scope="col" class="num" title="β·(ρ chosen − ρ rejected) when first measured">Margin at start</th><th scope="col" class="num" title="β·(ρ chosen − ρ rejected) at the last step that measured it">Margin now</th></tr></thead>
    <tbody id="rows"></tbody>
  </table>
  <p id="hint" class="hint">Click a pair or press Enter to compare chosen and rejected in the diff editor; ↑/↓ move between pairs.</p>`;

const titleEl = byId('title');
const liveEl = byId('live');
const metaEl = byId('meta');
const countsEl = byId('counts');
const messageEl = byId('message');
const rowsEl = byId('rows');
const filterEl = inputById('filter');
const sortEl = byId('sort') as HTMLSelectElement;

let rows: PairRow[] = [];
let source = client.getState()?.source;
let isRun = false;

const fmt = (v: number | null) => (v === null ? '–' : (v >= 0 ? '+' : '') + v.toFixed(4));

function clip(s: string, n = 160): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

function render(): void {
  const shown = orderPairs(rows, sortEl.value as PairSort, filterEl.value);
  const focusedId = (document.activeElement as HTMLElement | null)?.dataset?.id;
  rowsEl.replaceChildren();
  for (const r of shown.slice(0, MAX_ROWS)) {
    const tr = el('tr');
    tr.tabIndex = 0;
    tr.dataset.id = r.id;
    if (r.now !== null && r.now < 0) tr.classList.add('misranked');
    tr.setAttribute('aria-label', `${r.id}: chosen ${clip(r.chosen, 60)}, rejected ${clip(r.rejected, 60)}, margin now ${fmt(r.now)}`);
    const id = el('td', 'id', r.id.replace(/^.*[\\/]/, ''));
    id.title = r.id + (r.split ? ` (${r.split})` : '');
    tr.append(id, el('td', 'text', clip(r.prompt)), el('td', 'text chosen', clip(r.chosen)), el('td', 'text rejected', clip(r.rejected)), el('td', 'num', fmt(r.start)), el('td', 'num now', fmt(r.now)));
    rowsEl.append(tr);
  }
  const c = pairCounts(rows);
  const more = shown.length > MAX_ROWS ? ` — showing the first ${MAX_ROWS} of ${shown.length}; filter to narrow` : '';
  countsEl.textContent = `${c.total} pairs${filterEl.value.trim() ? `, ${shown.length} match` : ''}${isRun ? `; ${c.measured} measured, ${c.misranked} mis-ranked now` : ''}${more}`;
  if (focusedId) (rowsEl.querySelector(`tr[data-id="${CSS.escape(focusedId)}"]`) as HTMLElement | null)?.focus();
}

const scheduleRender = frameScheduler(render);

function onMessage(msg: ToWebview): void {
  switch (msg.type) {
    case 'snapshot':
      rows = msg.pairs;
      source = msg.source.path;
      isRun = msg.source.kind === 'run';
      client.setState({ kind: 'pairs', source });
      titleEl.textContent = `Pairs: ${msg.title}`;
      document.title = `Pairs: ${msg.title}`;
      liveEl.hidden = !msg.running;
      metaEl.textContent = [isRun ? `run ${msg.source.path}` : undefined, msg.source.pairsFile, msg.beta !== undefined ? `β ${msg.beta}` : undefined].filter(Boolean).join(' · ');
      messageEl.textContent = msg.skipped.length ? `${msg.skipped.length} line(s) are not pairs and were left out (first: ${msg.skipped[0]!.where}: ${msg.skipped[0]!.reason}); the log names them all.` : '';
      if (!isRun && sortEl.value === 'misranked') sortEl.value = 'file';
      scheduleRender();
      break;
    case 'margins':
      applyMargins(rows, msg.updates);
      liveEl.hidden = !msg.running;
      scheduleRender();
      break;
    case 'error':
      messageEl.textContent = msg.message;
      break;
  }
}

client.onNotification(onMessage);
filterEl.addEventListener('input', scheduleRender);
sortEl.addEventListener('change', scheduleRender);
byId('open-file').addEventListener('click', () => client.post({ type: 'openFile' }));
rowsEl.addEventListener('click', (e) => {
  const tr = (e.target as HTMLElement).closest('tr');
  if (tr?.dataset.id) client.post({ type: 'diff', id: tr.dataset.id });
});
rowsEl.addEventListener('keydown', (e) => {
  const tr = (e.target as HTMLElement).closest('tr');
  if (!tr) return;
  const move = (to: Element | null) => {
    if (to instanceof HTMLElement) {
      e.preventDefault();
      to.focus();
    }
  };
  if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    if (tr.dataset.id) client.post({ type: 'diff', id: tr.dataset.id });
  } else if (e.key === 'ArrowDown') move(tr.nextElementSibling);
  else if (e.key === 'ArrowUp') move(tr.previousElementSibling);
  else if (e.key === 'Home') move(rowsEl.firstElementChild);
  else if (e.key === 'End') move(rowsEl.lastElementChild);
});
window.addEventListener('error', (e) => client.post({ type: 'webviewError', message: String(e.message) }));
if (source) client.setState({ kind: 'pairs', source });
client.ready();
