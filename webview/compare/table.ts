// The Compare Runs table: colour, status, the config fields that differ, each kind's result columns;
// sortable, hide/show, select two, remove, Export CSV.
import { el, byId } from '../shared/dom';
import type { CompareRun } from '../../src/protocol/compareProtocol';
import { COMMON_RESULT_COLUMNS, toCsv } from '../../src/protocol/compareData';
import { errorText } from '../../src/protocol/panelProtocol';
import { client, colorOf, fmt, messageEl, saveState, selected, state, tableEl, view } from './panelState';
import { showHidden } from './charts';

interface Column {
  id: string;
  label: string;
  value(r: CompareRun): string | number | undefined;
  num?: boolean;
  config?: boolean;
  /** dollars: shown with "$" (the CSV keeps the number) */
  usd?: boolean;
}

const WANDB_URL = 'wandb.url';
const WANDB_LINK_PATHS = new Set([WANDB_URL, 'wandb.id']);

/** The W&B cell: a link-styled button that asks the host to open the run's W&B page. */
function wandbCell(r: CompareRun): HTMLElement {
  const td = el('td', 'keep');
  const url = r.config[WANDB_URL];
  if (!url) return td;
  const b = el('button', 'link', 'W&B ↗');
  b.title = url;
  b.setAttribute('aria-label', `open ${r.name} in W&B (${url})`);
  b.addEventListener('click', () => client.post({ type: 'openWandb', id: r.id }));
  td.append(b);
  return td;
}

function columns(): Column[] {
  const cols: Column[] = [
    { id: 'name', label: 'run', value: (r) => r.name },
    { id: 'status', label: 'status', value: (r) => r.status },
  ];
  if (view.sweep) cols.push({ id: 'rank', label: `rank (${view.sweep.metric.name}, ${view.sweep.metric.goal})`, value: (r) => r.rank, num: true }, { id: 'best', label: 'best', value: (r) => r.best, num: true });
  // a run's W&B id and URL are one column of links, not two of text
  for (const p of view.showAll ? [...view.differing, ...view.identical] : view.differing) if (!WANDB_LINK_PATHS.has(p)) cols.push({ id: `config:${p}`, label: p, value: (r) => r.config[p], config: true });
  if (view.runs.some((r) => r.config[WANDB_URL])) cols.push({ id: 'wandb', label: 'W&B', value: (r) => r.config[WANDB_URL] });
  // each kind's own result columns (its row of the kinds table says which), in the order the runs bring them; then every kind's
  const own = new Map<string, string>();
  for (const r of view.runs) for (const c of r.resultColumns) if (!own.has(c.id)) own.set(c.id, c.label);
  for (const [id, label] of own) cols.push({ id: `result:${id}`, label, value: (r) => r.results.values[id], num: true });
  // the cost columns only once some run logs its usage (older runs have none)
  for (const c of COMMON_RESULT_COLUMNS) if ((c.id !== 'costUsd' && c.id !== 'tokensTotal') || view.runs.some((r) => r.results[c.id] !== undefined)) cols.push({ id: `result:${c.id}`, label: c.label, value: (r) => r.results[c.id], num: true, ...(c.id === 'costUsd' ? { usd: true } : {}) });
  return cols;
}

function sortedRuns(cols: Column[]): CompareRun[] {
  if (!view.sort) return view.runs;
  const c = cols.find((x) => x.id === view.sort!.col);
  if (!c) return view.runs;
  const dir = view.sort.dir;
  return [...view.runs].sort((a, b) => {
    const va = c.value(a);
    const vb = c.value(b);
    if (va === undefined || va === '') return 1;
    if (vb === undefined || vb === '') return -1;
    const na = Number(va);
    const nb = Number(vb);
    if (Number.isFinite(na) && Number.isFinite(nb)) return (na - nb) * dir;
    return String(va).localeCompare(String(vb)) * dir;
  });
}

export function renderTable(): void {
  const cols = columns();
  const head = el('tr');
  head.append(el('th', undefined, 'show'), el('th', undefined, 'select'));
  for (const c of cols) {
    const th = el('th');
    const b = el('button', 'sort', `${c.label}${view.sort?.col === c.id ? (view.sort.dir === 1 ? ' ▲' : ' ▼') : ''}`);
    b.setAttribute('aria-label', `sort by ${c.label}`);
    b.addEventListener('click', () => {
      view.sort = view.sort?.col === c.id ? { col: c.id, dir: view.sort.dir === 1 ? -1 : 1 } : { col: c.id, dir: 1 };
      renderTable();
    });
    th.setAttribute('aria-sort', view.sort?.col === c.id ? (view.sort.dir === 1 ? 'ascending' : 'descending') : 'none');
    th.append(b);
    head.append(th);
  }
  head.append(el('th', undefined, ''));
  const body = sortedRuns(cols).map((r) => {
    const tr = el('tr');
    tr.dataset.run = r.id;
    if (state.hidden.has(r.id)) tr.classList.add('hidden-run');
    if (r.status === 'stopped early') tr.classList.add('stopped-early');
    if (view.sweep && r.rank === 1) tr.classList.add('best');
    const show = el('td', 'keep');
    const box = el('input');
    box.type = 'checkbox';
    box.checked = !state.hidden.has(r.id);
    box.setAttribute('aria-label', `show ${r.name} in the charts`);
    box.addEventListener('change', () => {
      if (box.checked) state.hidden.delete(r.id);
      else state.hidden.add(r.id);
      saveState();
      tr.classList.toggle('hidden-run', !box.checked);
      showHidden();
    });
    const sw = el('span', 'swatch');
    sw.style.background = colorOf(r.color);
    show.append(box, ' ', sw);
    const sel = el('td', 'keep');
    const pick = el('input');
    pick.type = 'checkbox';
    pick.checked = selected.has(r.id);
    pick.setAttribute('aria-label', `select ${r.name} (Diff configs, Compare Samples need two)`);
    pick.addEventListener('change', () => {
      if (pick.checked) selected.add(r.id);
      else selected.delete(r.id);
      updateButtons();
    });
    sel.append(pick);
    tr.append(show, sel);
    for (const c of cols) {
      if (c.id === 'wandb') {
        tr.append(wandbCell(r));
        continue;
      }
      const v = c.value(r);
      const td = el('td', c.num ? 'num' : c.config ? 'config' : c.id === 'name' ? 'name' : undefined, typeof v === 'number' ? `${c.usd ? '$' : ''}${fmt(v)}` : (v ?? ''));
      if (c.id === 'name') td.title = r.id;
      tr.append(td);
    }
    const rm = el('td', 'keep');
    const x = el('button', 'icon', '✕');
    x.setAttribute('aria-label', `remove ${r.name} from the comparison`);
    x.addEventListener('click', () => {
      selected.delete(r.id);
      state.runDirs = state.runDirs.filter((d) => d !== r.id);
      saveState();
      client.post({ type: 'removeRun', id: r.id });
    });
    rm.append(x);
    tr.append(rm);
    return tr;
  });
  const thead = el('thead');
  thead.append(head);
  const tbody = el('tbody');
  tbody.append(...body);
  tableEl.replaceChildren(thead, tbody);
  updateButtons();
}

function updateButtons(): void {
  const two = selected.size === 2;
  for (const id of ['diff', 'samples']) {
    const b = byId(id);
    if (two) b.removeAttribute('disabled');
    else b.setAttribute('disabled', '');
  }
}

export function exportCsv(): void {
  const cols = columns();
  const csv = toCsv(
    ['run_dir', ...cols.map((c) => c.label)],
    sortedRuns(cols).map((r) => [r.id, ...cols.map((c) => c.value(r))]),
  );
  client.request('exportCsv', { csv }).then(
    (r) => (messageEl.textContent = r.file ? `Exported ${r.file}` : ''),
    (err) => (messageEl.textContent = `Export failed: ${errorText(err)}`),
  );
}
