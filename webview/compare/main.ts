// The Compare Runs panel: a runs table (colour, status, the config fields that differ, result
// columns; sortable, hide/show, remove, Export CSV) over overlaid charts (one per metric, every run a
// line in its colour, x = step / wall time / tokens trained, EMA smoothing, seed bands), and for a
// sweep its ranking, a sensitivity view and parallel coordinates. The snapshot has no points: the
// charts scrolled into view ask the host for theirs (`charts`: every run's line smoothed and
// decimated to about the chart's width), again when the x axis, the smoothing or the width changes,
// or a run's rows grow. Once the panel is quiet, each chart in view is also drawn on the other x axes
// (hidden plots), so that changing the x axis shows one. Hiding a run is local: its series is hidden,
// nothing is asked for. A click on a chart point opens that run's group breakdown at that iteration.
import 'uplot/dist/uPlot.min.css';
import '../shared/base.css';
import './compare.css';
import uPlot from 'uplot';
import { PanelClient } from '../shared/client';
import { isChecked, registerComponents } from '../shared/components';
import { byId, el, frameScheduler, inputById, onThemeChange } from '../shared/dom';
import { readTheme, withAlpha } from '../shared/theme';
import { CompareProtocol, CompareRun, SweepView, ToWebview, type DecodedChartLines } from '../../src/protocol/compareProtocol';
import { COMMON_RESULT_COLUMNS, metricGroupsOfKeys, seedBand, toCsv, type XAxis } from '../../src/protocol/compareData';
import { errorText } from '../../src/protocol/panelProtocol';
import { integerAxis } from '../../src/protocol/axisTicks';

registerComponents();
const client = new PanelClient(CompareProtocol);
const DEFAULT_SMOOTHING = 0.6;
const HEIGHT = 190;
/** A run's line: one CSS pixel, a hairline the canvas strokes fast (50 runs × 9 charts at 1.5 px took ~100 ms to rasterise per redraw in software) */
const LINE_WIDTH = 1;

const app = byId('app');
app.innerHTML = `
  <header><h1 id="title">Compare Runs</h1></header>
  <div class="controls">
    <label for="x-axis">X axis</label>
    <select id="x-axis"><option value="step">step</option><option value="wall">wall time (s)</option><option value="tokens">tokens trained</option></select>
    <label for="smoothing">Smoothing</label>
    <input type="range" id="smoothing" min="0" max="0.99" step="0.01" /><output id="smoothing-value" for="smoothing"></output>
    <vscode-checkbox id="group-seeds">Group seeds (min–max band)</vscode-checkbox>
    <vscode-checkbox id="show-all">Show all config fields</vscode-checkbox>
    <vscode-button id="export" appearance="secondary">Export CSV</vscode-button>
    <vscode-button id="diff" appearance="secondary" disabled>Diff configs</vscode-button>
    <vscode-button id="samples" appearance="secondary" disabled>Compare Samples Across Runs</vscode-button>
  </div>
  <p id="message" role="status"></p>
  <div class="table-wrap"><table class="runs" id="runs" aria-label="Runs"></table></div>
  <details class="sweep" id="sweep" hidden open aria-label="Sweep"></details>
  <main id="charts" aria-label="Charts"></main>`;

const titleEl = byId('title');
const messageEl = byId('message');
const tableEl = byId('runs');
const chartsEl = byId('charts');
const sweepEl = byId('sweep') as HTMLDetailsElement;
const xAxisEl = byId('x-axis') as HTMLSelectElement;
const smoothingEl = inputById('smoothing');
const groupSeedsEl = byId('group-seeds');
const showAllEl = byId('show-all');

const saved = client.getState();
let state = {
  runDirs: saved?.runDirs ?? [],
  sweepDir: saved?.sweepDir,
  xAxis: (saved?.xAxis ?? 'step') as XAxis,
  smoothing: saved?.smoothing ?? DEFAULT_SMOOTHING,
  hidden: new Set(saved?.hidden ?? []),
  groupSeeds: saved?.groupSeeds ?? false,
  sweepCollapsed: saved?.sweepCollapsed ?? false,
};
let runs: CompareRun[] = [];
let differing: string[] = [];
let identical: string[] = [];
let sweep: SweepView | undefined;
let showAll = false;
let sort: { col: string; dir: 1 | -1 } | undefined;
const selected = new Set<string>();
let theme = readTheme();

function saveState(): void {
  client.setState({ runDirs: state.runDirs, ...(state.sweepDir ? { sweepDir: state.sweepDir } : {}), xAxis: state.xAxis, smoothing: state.smoothing, hidden: [...state.hidden], groupSeeds: state.groupSeeds, sweepCollapsed: state.sweepCollapsed });
}

/** A run's colour: the theme's chart colours first, then hues spread by the golden angle. */
function colorOf(i: number): string {
  const p = theme.palette;
  const base = [p.blue, p.orange, p.green, p.red, p.purple, p.yellow];
  if (i < base.length) return base[i]!;
  const dark = document.body.classList.contains('vscode-dark');
  return `hsl(${Math.round((i * 137.508) % 360)}, 65%, ${dark ? 62 : 42}%)`;
}

function fmt(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (Number.isInteger(v) && a < 1e9) return String(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
  // four significant digits without trailing zeros: 0.003, not 0.003000 (which a narrow axis clips to "03000")
  return String(Number(v.toPrecision(4)));
}

// ---------------------------------------------------------------------------------------------------
// The table

interface Column {
  id: string;
  label: string;
  value(r: CompareRun): string | number | undefined;
  num?: boolean;
  config?: boolean;
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
  if (sweep) cols.push({ id: 'rank', label: `rank (${sweep.metric.name}, ${sweep.metric.goal})`, value: (r) => r.rank, num: true }, { id: 'best', label: 'best', value: (r) => r.best, num: true });
  // a run's W&B id and URL are one column of links, not two of text
  for (const p of showAll ? [...differing, ...identical] : differing) if (!WANDB_LINK_PATHS.has(p)) cols.push({ id: `config:${p}`, label: p, value: (r) => r.config[p], config: true });
  if (runs.some((r) => r.config[WANDB_URL])) cols.push({ id: 'wandb', label: 'W&B', value: (r) => r.config[WANDB_URL] });
  // each kind's own result columns (its row of the kinds table says which), in the order the runs bring them; then every kind's
  const own = new Map<string, string>();
  for (const r of runs) for (const c of r.resultColumns) if (!own.has(c.id)) own.set(c.id, c.label);
  for (const [id, label] of own) cols.push({ id: `result:${id}`, label, value: (r) => r.results.values[id], num: true });
  for (const c of COMMON_RESULT_COLUMNS) cols.push({ id: `result:${c.id}`, label: c.label, value: (r) => r.results[c.id], num: true });
  return cols;
}

function sortedRuns(cols: Column[]): CompareRun[] {
  if (!sort) return runs;
  const c = cols.find((x) => x.id === sort!.col);
  if (!c) return runs;
  const dir = sort.dir;
  return [...runs].sort((a, b) => {
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

function renderTable(): void {
  const cols = columns();
  const head = el('tr');
  head.append(el('th', undefined, 'show'), el('th', undefined, 'select'));
  for (const c of cols) {
    const th = el('th');
    const b = el('button', 'sort', `${c.label}${sort?.col === c.id ? (sort.dir === 1 ? ' ▲' : ' ▼') : ''}`);
    b.setAttribute('aria-label', `sort by ${c.label}`);
    b.addEventListener('click', () => {
      sort = sort?.col === c.id ? { col: c.id, dir: sort.dir === 1 ? -1 : 1 } : { col: c.id, dir: 1 };
      renderTable();
    });
    th.setAttribute('aria-sort', sort?.col === c.id ? (sort.dir === 1 ? 'ascending' : 'descending') : 'none');
    th.append(b);
    head.append(th);
  }
  head.append(el('th', undefined, ''));
  const body = sortedRuns(cols).map((r) => {
    const tr = el('tr');
    tr.dataset.run = r.id;
    if (state.hidden.has(r.id)) tr.classList.add('hidden-run');
    if (r.status === 'stopped early') tr.classList.add('stopped-early');
    if (sweep && r.rank === 1) tr.classList.add('best');
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
      const td = el('td', c.num ? 'num' : c.config ? 'config' : c.id === 'name' ? 'name' : undefined, typeof v === 'number' ? fmt(v) : (v ?? ''));
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

function exportCsv(): void {
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

// ---------------------------------------------------------------------------------------------------
// The charts

/** A chart on one x axis: one uPlot. A chart keeps one per x axis; the axes not shown are drawn ahead, hidden, once the panel is quiet, so that changing the x axis shows one. */
interface Plot {
  u: uPlot;
  el: HTMLElement;
  shape: string;
  /** what it shows (plotKey of its lines) */
  drawnFor: string;
  /** the hidden runs when it was last drawn: hiding a run redraws the plot shown, the others when they are shown or drawn ahead */
  hiddenFor: string;
  label: string;
  /** for a click: each series' run and, per aligned x index, that run's step */
  pick: { runId: string; steps: (number | null)[] }[];
  /** each series' run (index + 1 = the uPlot series), when every run is its own line */
  seriesRuns?: string[];
  /** each series' name and colour for the hover readout (band edges: none) */
  readout: ({ label: string; color: string } | undefined)[];
}

interface Chart {
  key: string;
  el: HTMLElement;
  plotEl: HTMLElement;
  hintEl: HTMLElement;
  plots: Map<XAxis, Plot>;
  visible: boolean;
  /** the plot of the current x axis is up to date and shown */
  drawn: boolean;
  /** the host's lines for this chart by the request they answer (linesKey: x axis, smoothing, width, rows); the other x axes' are fetched ahead */
  lines: Map<string, DecodedChartLines>;
  readoutIdx?: number | null;
  /** on screen now (the observer above counts 200 px around it as visible) */
  onScreen: boolean;
}

const charts = new Map<string, Chart>();
/** bumped when runs' rows change: every chart's lines are asked for again */
let rowsVersion = 0;
/** `charts` requests on their way, by linesKey: the chart keys each asks for; `ahead`: fetched for an x axis not shown */
interface Inflight {
  lk: string;
  abort: AbortController;
  keys: Set<string>;
  ahead: boolean;
}
const inflight = new Set<Inflight>();
const X_AXES: XAxis[] = ['step', 'wall', 'tokens'];
const observer = new IntersectionObserver(
  (entries) => {
    for (const e of entries) {
      const c = charts.get((e.target as HTMLElement).dataset.key!);
      if (!c) continue;
      c.visible = e.isIntersecting;
      if (c.visible && !c.drawn) scheduleCharts();
    }
  },
  { rootMargin: '200px' },
);
const onScreen = new IntersectionObserver((entries) => {
  for (const e of entries) {
    const c = charts.get((e.target as HTMLElement).dataset.key!);
    if (c) c.onScreen = e.isIntersecting;
  }
});

function buildChartList(): void {
  const groups = metricGroupsOfKeys(runs.map((r) => r.keys));
  const wanted = groups.flatMap((g) => g.keys).join('\n');
  if (chartsEl.dataset.keys === wanted) return;
  chartsEl.dataset.keys = wanted;
  for (const c of charts.values()) {
    for (const p of c.plots.values()) p.u.destroy();
    observer.unobserve(c.el);
    onScreen.unobserve(c.el);
  }
  charts.clear();
  chartsEl.replaceChildren();
  knownWidth = undefined;
  for (const g of groups) {
    chartsEl.append(el('h2', 'group-title', g.group === 'sft' ? bareGroupTitle(g.keys) : g.group));
    const grid = el('div', 'charts');
    for (const key of g.keys) {
      const section = el('section', 'chart');
      section.dataset.key = key;
      section.setAttribute('role', 'group');
      section.setAttribute('aria-label', key);
      const plotEl = el('div', 'plot');
      plotEl.tabIndex = 0;
      plotEl.setAttribute('role', 'img');
      const hintEl = el('div', 'hint');
      hintEl.append(el('div', 'hint-line', IDLE_HINT));
      section.append(el('h3', undefined, key), plotEl, hintEl);
      grid.append(section);
      const c: Chart = { key, el: section, plotEl, hintEl, plots: new Map(), visible: false, drawn: false, lines: new Map(), onScreen: false };
      charts.set(key, c);
      observer.observe(section);
      onScreen.observe(section);
    }
    chartsEl.append(grid);
  }
}

/** A chart to draw again (data-drawn: what the UI tests and the bench wait for). */
function undraw(c: Chart): void {
  c.drawn = false;
  delete c.el.dataset.drawn;
}

function invalidateCharts(): void {
  delete chartsEl.dataset.ahead;
  for (const c of charts.values()) undraw(c);
  scheduleCharts();
}

let knownWidth: number | undefined;
/** The plot width of the charts (all charts of the grid are as wide): read once until the grid is resized or rebuilt (a read after a redraw forces a layout). */
function plotWidth(): number {
  if (knownWidth === undefined) {
    const first = charts.values().next().value;
    const w = first?.el.clientWidth ?? 0;
    if (w === 0) return 240;
    knownWidth = Math.max(w - 18, 240);
  }
  return knownWidth;
}

/** What a chart's lines depend on besides its key: the x axis, the smoothing, the width, the runs' rows. */
function linesKey(width: number, axis: XAxis = state.xAxis): string {
  return `${axis}|${state.smoothing}|${width}|${rowsVersion}`;
}

/** bumped when the theme changes: every plot is drawn again */
let themeVersion = 0;
const hiddenKey = () => [...state.hidden].sort().join('\n');
/** What a plot shows: its lines, drawn with or without seed groups (whose bands are of the shown runs) in this theme. */
function plotKey(lk: string): string {
  return `${lk}|${themeVersion}|${state.groupSeeds ? `groups|${hiddenKey()}` : 'runs'}`;
}

/** Shows this plot of the chart (its other x axes' plots hidden) as up to date. */
function showPlot(c: Chart, p: Plot): void {
  syncHidden(p);
  for (const q of c.plots.values()) q.el.hidden = q !== p;
  p.u.syncRect(true);
  c.plotEl.setAttribute('aria-label', p.label);
  if (c.readoutIdx !== null) c.hintEl.replaceChildren(el('div', 'hint-line', IDLE_HINT));
  c.readoutIdx = null;
  c.drawn = true;
  c.el.dataset.drawn = '1';
}

/** Hides or shows the plot's runs as the table says (one redraw, when it differs). */
function syncHidden(p: Plot): void {
  const now = hiddenKey();
  if (p.hiddenFor === now) return;
  // seed groups have no series per run: their plots are drawn again instead (plotKey holds the hidden runs)
  const runsOf = p.seriesRuns;
  const u = p.u;
  if (runsOf) u.batch(() => runsOf.forEach((id, i) => u.series[i + 1]!.show !== !state.hidden.has(id) && u.setSeries(i + 1, { show: !state.hidden.has(id) })));
  p.hiddenFor = now;
}

/**
 * Draws the visible charts whose lines are here (those on screen first; those just outside it a
 * frame later, so that the frame after a change shows the charts the user sees); asks the host for
 * the others' lines (again those on screen first).
 */
function drawVisible(): void {
  const width = plotWidth();
  const lk = linesKey(width);
  const pk = plotKey(lk);
  const want: Chart[] = [];
  const ready: Chart[] = [];
  for (const c of charts.values()) {
    if (!c.visible || c.drawn) continue;
    const drawnAhead = c.plots.get(state.xAxis);
    if (drawnAhead?.drawnFor === pk) showPlot(c, drawnAhead);
    else if (c.lines.has(lk)) ready.push(c);
    else want.push(c);
  }
  const now = ready.some((c) => c.onScreen) ? ready.filter((c) => c.onScreen) : ready;
  for (const c of now) drawChart(c, c.lines.get(lk)!, width);
  if (now.length < ready.length) scheduleCharts();
  if (want.length) {
    delete chartsEl.dataset.ahead;
    // the charts on screen first: those around it are asked for when these have come
    const first = want.some((c) => c.onScreen) ? want.filter((c) => c.onScreen) : want;
    requestLines(first, width, state.xAxis, false);
  } else scheduleAhead();
}

const scheduleCharts = frameScheduler(drawVisible);

/**
 * Asks the host for the lines of these charts on this axis. A question for what is shown cancels
 * older ones for what is no longer wanted (another axis, smoothing, width, rows); a question asked
 * ahead (another x axis, so that switching to it is a redraw, no round trip) is cancelled only when
 * its lines go stale. A chart already asked for under the same key is not asked for again.
 */
function requestLines(want: Chart[], width: number, axis: XAxis, ahead: boolean): void {
  const lk = linesKey(width, axis);
  const current = new Set(X_AXES.map((a) => linesKey(width, a)));
  for (const f of inflight) {
    const stale = !current.has(f.lk) || (!ahead && !f.ahead && f.lk !== lk);
    if (stale) {
      f.abort.abort();
      inflight.delete(f);
    }
  }
  const asked = new Set([...inflight].filter((f) => f.lk === lk).flatMap((f) => [...f.keys]));
  const keys = want.map((c) => c.key).filter((k) => !asked.has(k));
  if (keys.length === 0) return;
  const mine: Inflight = { lk, abort: new AbortController(), keys: new Set(keys), ahead };
  inflight.add(mine);
  client.request('charts', { keys, xAxis: axis, smoothing: state.smoothing, width }, mine.abort.signal).then(
    (r) => {
      inflight.delete(mine);
      for (const lines of r.charts) {
        const c = charts.get(lines.key);
        if (!c) continue;
        // only the lines of this width, smoothing and rows are kept (one per x axis)
        for (const k of c.lines.keys()) if (!current.has(k)) c.lines.delete(k);
        c.lines.set(lk, lines);
      }
      // drawn now, not a frame later: the reply is what the charts were waiting for
      if (lk === linesKey(plotWidth())) drawVisible();
      else scheduleAhead();
    },
    (err) => {
      inflight.delete(mine);
      if (mine.abort.signal.aborted) return;
      messageEl.textContent = `Could not load the charts: ${errorText(err)}`;
    },
  );
}

let aheadTimer: ReturnType<typeof setTimeout> | undefined;
/**
 * Once the charts in view are drawn and the panel is quiet: their lines on the other x axes, then
 * their plots on those axes drawn (hidden), one chart per task. data-ahead on the charts: every chart
 * in view has its plot on every x axis drawn and up to date (the bench waits on it).
 */
function scheduleAhead(delay = 250): void {
  clearTimeout(aheadTimer);
  aheadTimer = setTimeout(() => {
    if ([...inflight].some((f) => !f.ahead)) return;
    const width = plotWidth();
    const shown = [...charts.values()].filter((c) => c.visible && c.drawn);
    let missing = false;
    for (const axis of X_AXES) {
      if (axis === state.xAxis) continue;
      const lk = linesKey(width, axis);
      const want = shown.filter((c) => !c.lines.has(lk));
      if (want.length) {
        missing = true;
        requestLines(want, width, axis, true);
      }
      // one plot drawn ahead per task (a redraw is a few ms), then look again
      const stale = shown.find((c) => {
        const p = c.plots.get(axis);
        return c.lines.has(lk) && (p?.drawnFor !== plotKey(lk) || p.hiddenFor !== hiddenKey());
      });
      if (stale) {
        const p = stale.plots.get(axis);
        if (p?.drawnFor === plotKey(lk)) syncHidden(p);
        else drawChart(stale, stale.lines.get(lk)!, width, axis);
        delete chartsEl.dataset.ahead;
        // the next one in the next task, not after the quiet time
        scheduleAhead(0);
        return;
      }
    }
    if (missing) delete chartsEl.dataset.ahead;
    else chartsEl.dataset.ahead = '1';
  }, delay);
}

/** Hiding or showing a run: each drawn chart hides or shows that series (seed groups: their bands are redrawn). */
function showHidden(): void {
  for (const c of charts.values()) {
    const p = c.plots.get(state.xAxis);
    if (!c.drawn || !p?.seriesRuns || !c.visible) {
      undraw(c);
      continue;
    }
    syncHidden(p);
    c.readoutIdx = undefined;
    showHover(c, p, p.u);
  }
  scheduleCharts();
}

/** The series of one chart: every run a line (hidden runs hidden); with "group seeds" one mean line and band per group of 2+ shown runs. */
function chartData(lines: DecodedChartLines, axis: XAxis): { data: uPlot.AlignedData; series: uPlot.Series[]; bands: uPlot.Band[]; pick: Plot['pick']; seriesRuns?: string[]; readout: Plot['readout'] } {
  const byId = new Map(runs.map((r) => [r.id, r]));
  const present = lines.runs.filter((l) => byId.has(l.id));
  const series: uPlot.Series[] = [{ label: axis === 'step' ? 'step' : axis === 'wall' ? 'wall time (s)' : 'tokens trained' }];
  const ys: (number | null)[][] = [];
  const bands: uPlot.Band[] = [];
  const pick: Plot['pick'] = [];
  if (state.groupSeeds) {
    const shown = present.filter((l) => !state.hidden.has(l.id));
    const byGroup = new Map<string, typeof shown>();
    for (const l of shown) {
      const g = byId.get(l.id)!.seedGroup;
      byGroup.set(g, [...(byGroup.get(g) ?? []), l]);
    }
    for (const members of byGroup.values()) {
      const first = byId.get(members[0]!.id)!;
      const color = colorOf(first.color);
      if (members.length === 1) {
        ys.push(members[0]!.y);
        series.push({ label: first.name, stroke: color, width: LINE_WIDTH, spanGaps: true, points: { show: false }, value: (_u, v) => fmt(v) });
        pick.push({ runId: first.id, steps: members[0]!.steps });
        continue;
      }
      const band = seedBand(members.map((m) => m.y));
      const label = `${first.name} +${members.length - 1} seeds`;
      const base = ys.length + 1;
      ys.push(band.max, band.min, band.mean);
      series.push(
        { label: `${label} (max)`, stroke: withAlpha(color, 0.3), width: 0.5, spanGaps: true, points: { show: false }, class: 'hidden-series' } as uPlot.Series,
        { label: `${label} (min)`, stroke: withAlpha(color, 0.3), width: 0.5, spanGaps: true, points: { show: false }, class: 'hidden-series' } as uPlot.Series,
        { label: `${label} (mean)`, stroke: color, width: 2, spanGaps: true, points: { show: false }, value: (_u, v) => fmt(v) },
      );
      bands.push({ series: [base, base + 1], fill: withAlpha(color, 0.15) });
      const steps = members[0]!.steps;
      pick.push({ runId: first.id, steps }, { runId: first.id, steps }, { runId: first.id, steps });
    }
    return { data: [lines.x, ...ys] as uPlot.AlignedData, series, bands, pick, readout: readoutOf(series) };
  }
  for (const l of present) {
    const r = byId.get(l.id)!;
    ys.push(l.y);
    series.push({ label: r.name, show: !state.hidden.has(r.id), stroke: colorOf(r.color), width: LINE_WIDTH, dash: r.status === 'stopped early' ? [4, 3] : undefined, spanGaps: true, points: { show: lines.x.length < 3 }, value: (_u, v) => fmt(v) });
    pick.push({ runId: r.id, steps: l.steps });
  }
  return { data: [lines.x, ...ys] as uPlot.AlignedData, series, bands, pick, seriesRuns: present.map((l) => l.id), readout: readoutOf(series) };
}

/** The hover readout's entries: each line's name and colour (a seed band's edges have none). */
function readoutOf(series: uPlot.Series[]): Plot['readout'] {
  return series.slice(1).map((s) => (s.class === 'hidden-series' ? undefined : { label: String(s.label), color: String(s.stroke) }));
}

/** Draws the chart's lines on `axis` into its plot for that axis (shown if it is the current axis, else hidden: drawn ahead). */
function drawChart(c: Chart, lines: DecodedChartLines, width: number, axis: XAxis = state.xAxis): void {
  const { data, series, bands, pick, seriesRuns, readout } = chartData(lines, axis);
  const shape = JSON.stringify([series.map((s) => [s.label, s.stroke, s.width]), bands.length, width, theme, state.groupSeeds]);
  const shownLines = series.filter((s, i) => i > 0 && s.show !== false).length;
  const label = `${c.key}: ${shownLines} lines over ${data[0].length} points; click a point to open that run's groups`;
  const drawn = { drawnFor: plotKey(linesKey(width, axis)), hiddenFor: hiddenKey(), label, pick, seriesRuns, readout };
  let p = c.plots.get(axis);
  if (p && p.shape === shape) {
    const u = p.u;
    u.batch(() => {
      series.forEach((s, i) => i > 0 && u.series[i]!.show !== (s.show !== false) && u.setSeries(i, { show: s.show !== false }));
      u.setData(data);
    });
    Object.assign(p, drawn);
  } else {
    p?.u.destroy();
    p?.el.remove();
    const holder = el('div', 'axis-plot');
    holder.dataset.axis = axis;
    holder.hidden = true;
    c.plotEl.append(holder);
    const tick: uPlot.Axis = { stroke: theme.foreground, font: theme.font, grid: { stroke: theme.grid, width: 1 }, ticks: { stroke: theme.grid, width: 1 } };
    const made: Plot = { ...drawn, el: holder, shape, u: undefined as unknown as uPlot };
    made.u = new uPlot(
      {
        width,
        height: HEIGHT,
        scales: { x: { time: false } },
        // steps and tokens are counts: whole-number ticks (wall time may have fractions)
        axes: [{ ...tick, ...(axis === 'wall' ? {} : integerAxis) }, { ...tick, size: 56, values: (_u, t) => t.map((v) => fmt(v)) }],
        // no legend: 50 runs × every chart drawn would be thousands of cells updated on each redraw; the table is the key, the readout below a chart gives every run's value under the pointer
        legend: { show: false },
        cursor: { drag: { x: false, y: false }, focus: { prox: 16 } },
        focus: { alpha: 0.4 },
        bands,
        series,
        hooks: {
          ready: [(u) => u.over.addEventListener('click', () => pickPoint(made, u))],
          setCursor: [(u) => showHover(c, made, u)],
        },
      },
      data,
      holder,
    );
    c.plots.set(axis, made);
    p = made;
  }
  if (axis === state.xAxis) showPlot(c, p);
}

/** The series nearest the cursor at its x: its run and step. */
function nearest(p: Plot, u: uPlot): { runId: string; step: number; name: string } | undefined {
  const idx = u.cursor.idx;
  const top = u.cursor.top;
  if (idx === null || idx === undefined || top === undefined) return undefined;
  let best: { d: number; k: number } | undefined;
  for (let k = 1; k < u.series.length; k++) {
    const v = u.data[k]?.[idx];
    if (v === null || v === undefined || !u.series[k]!.show) continue;
    const d = Math.abs(u.valToPos(v, 'y') - top);
    if (!best || d < best.d) best = { d, k };
  }
  if (!best) return undefined;
  const info = p.pick[best.k - 1];
  const step = info?.steps[idx];
  if (!info || step === null || step === undefined) return undefined;
  return { runId: info.runId, step, name: runs.find((r) => r.id === info.runId)?.name ?? '' };
}

const IDLE_HINT = "Point at the chart for every run's value; click a line to open that run's groups.";

/** Under the chart: the line nearest the pointer, then every shown line's value at the pointer's x (highest first). */
function showHover(c: Chart, p: Plot, u: uPlot): void {
  const idx = u.cursor.idx;
  const n = nearest(p, u);
  if (idx === null || idx === undefined) {
    if (c.readoutIdx !== null) c.hintEl.replaceChildren(el('div', 'hint-line', IDLE_HINT));
    c.readoutIdx = null;
    return;
  }
  const xText = `${u.series[0]!.label} ${fmt(u.data[0][idx])}`;
  const head = n ? `${xText} · nearest ${n.name}: click to open its iteration ${n.step}` : xText;
  const headEl = c.hintEl.firstElementChild;
  if (c.readoutIdx === idx && headEl) {
    headEl.textContent = head;
    return;
  }
  c.readoutIdx = idx;
  const items: { label: string; color: string; v: number }[] = [];
  p.readout.forEach((r, i) => {
    const v = u.data[i + 1]?.[idx];
    if (r && u.series[i + 1]!.show && v !== null && v !== undefined) items.push({ ...r, v });
  });
  items.sort((a, b) => b.v - a.v);
  const list = el('ul', 'readout');
  list.setAttribute('aria-label', `${c.key} at ${xText}`);
  for (const it of items) {
    const li = el('li');
    const sw = el('span', 'swatch');
    sw.style.background = it.color;
    li.append(sw, ` ${it.label} `, el('b', undefined, fmt(it.v)));
    list.append(li);
  }
  c.hintEl.replaceChildren(el('div', 'hint-line', head), list);
}

function pickPoint(p: Plot, u: uPlot): void {
  const n = nearest(p, u);
  if (!n) return;
  client.request('openIteration', { runDir: n.runId, step: n.step }).then(
    (r) => {
      if (!r.opened) messageEl.textContent = `${n.name} has no samples at iteration ${n.step}.`;
    },
    (err) => (messageEl.textContent = `Could not open iteration ${n.step} of ${n.name}: ${errorText(err)}`),
  );
}

// ---------------------------------------------------------------------------------------------------
// The sweep: sensitivity and parallel coordinates (SVG: a handful of runs, crisp in both themes)

const SVG = 'http://www.w3.org/2000/svg';
function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function renderSweep(): void {
  sweepEl.hidden = !sweep;
  if (!sweep) return;
  const colorById = new Map(runs.map((r) => [r.id, colorOf(r.color)]));
  const nameById = new Map(runs.map((r) => [r.id, r.name]));
  // a summary: the sweep's views fold away (the choice kept with the panel), bringing the charts up under the table
  const summary = el('summary');
  summary.append(el('h2', 'group-title', `Sweep ${sweep.name}: ${sweep.metric.name} (${sweep.metric.goal}) against each swept field`));
  const parts: Element[] = [summary];
  const grid = el('div', 'charts');
  const W = 380;
  const H = 200;
  const pad = { l: 56, r: 12, t: 10, b: 34 };
  for (const f of sweep.sensitivity) {
    const box = el('section', 'chart');
    box.setAttribute('aria-label', `sensitivity of ${sweep.metric.name} to ${f.field}`);
    const s = svg('svg', { width: W, height: H, role: 'img', 'aria-label': `${sweep.metric.name} against ${f.field}: ${f.mean.map((m) => `${f.categories ? f.categories[m.x] : fmt(m.x)} → ${fmt(m.y)}`).join(', ')}` });
    const xs = f.points.map((p) => p.x).concat(f.mean.map((m) => m.x));
    const ys = f.points.map((p) => p.y);
    if (xs.length && ys.length) {
      const tx = (v: number) => (f.log ? Math.log10(v) : v);
      const x0 = Math.min(...xs.map(tx));
      const x1 = Math.max(...xs.map(tx));
      const y0 = Math.min(...ys);
      const y1 = Math.max(...ys);
      const px = (v: number) => pad.l + (x1 === x0 ? 0.5 : (tx(v) - x0) / (x1 - x0)) * (W - pad.l - pad.r);
      const py = (v: number) => H - pad.b - (y1 === y0 ? 0.5 : (v - y0) / (y1 - y0)) * (H - pad.t - pad.b);
      s.append(svg('line', { class: 'axis', x1: pad.l, y1: H - pad.b, x2: W - pad.r, y2: H - pad.b }), svg('line', { class: 'axis', x1: pad.l, y1: pad.t, x2: pad.l, y2: H - pad.b }));
      s.append(svg('text', { x: 4, y: pad.t + 10 }, fmt(y1)), svg('text', { x: 4, y: H - pad.b }, fmt(y0)));
      const ticks = f.categories ? f.categories.map((c, i) => ({ v: i, label: c })) : [...new Set(f.mean.map((m) => m.x))].map((v) => ({ v, label: fmt(v) }));
      for (const t of ticks) s.append(svg('text', { x: px(t.v) - 14, y: H - pad.b + 14 }, t.label));
      s.append(svg('text', { x: W / 2 - 40, y: H - 4 }, `${f.field}${f.log ? ' (log)' : ''}`));
      if (f.mean.length > 1) s.append(svg('polyline', { points: f.mean.map((m) => `${px(m.x)},${py(m.y)}`).join(' '), fill: 'none', stroke: theme.foreground, 'stroke-width': 1.5 }));
      for (const p of f.points) {
        const dot = svg('circle', { cx: px(p.x), cy: py(p.y), r: 4, fill: colorById.get(p.id) ?? theme.foreground });
        dot.append(svg('title', {}, `${nameById.get(p.id) ?? p.id}${p.seed !== undefined ? ` (seed ${p.seed})` : ''}: ${fmt(p.y)}`));
        s.append(dot);
      }
    }
    box.append(el('h3', undefined, f.field), s);
    grid.append(box);
  }
  parts.push(grid);
  if (sweep.parallel) {
    const pc = sweep.parallel;
    const PW = Math.max(480, pc.axes.length * 160);
    const PH = 240;
    const top = 24;
    const bottom = PH - 30;
    const ax = (i: number) => 40 + (i * (PW - 80)) / Math.max(1, pc.axes.length - 1);
    const py = (p: number) => bottom - p * (bottom - top);
    const s = svg('svg', { width: PW, height: PH, role: 'img', 'aria-label': `parallel coordinates over ${pc.axes.map((a) => a.name).join(', ')}` });
    pc.axes.forEach((a, i) => {
      s.append(svg('line', { class: 'axis', x1: ax(i), y1: top, x2: ax(i), y2: bottom }));
      s.append(svg('text', { x: ax(i) - 30, y: 14 }, a.name));
      s.append(svg('text', { x: ax(i) + 4, y: top + 4 }, a.categories ? (a.categories.at(-1) ?? '') : fmt(a.max)));
      s.append(svg('text', { x: ax(i) + 4, y: bottom }, a.categories ? (a.categories[0] ?? '') : fmt(a.min)));
    });
    for (const l of pc.lines) {
      const pts = l.pos.map((p, i) => (p === null ? undefined : `${ax(i)},${py(p)}`)).filter((x): x is string => x !== undefined);
      const line = svg('polyline', { points: pts.join(' '), fill: 'none', stroke: colorById.get(l.id) ?? theme.foreground, 'stroke-width': 2, opacity: state.hidden.has(l.id) ? 0.2 : 0.9 });
      line.append(svg('title', {}, `${nameById.get(l.id) ?? l.id}: ${fmt(l.value)}`));
      s.append(line);
    }
    const wrap = el('div', 'parallel');
    wrap.append(s);
    parts.push(el('h2', 'group-title', 'Parallel coordinates'), wrap);
  }
  sweepEl.replaceChildren(...parts);
  sweepEl.open = !state.sweepCollapsed;
}
sweepEl.addEventListener('toggle', () => {
  if (sweepEl.hidden || state.sweepCollapsed === !sweepEl.open) return;
  state.sweepCollapsed = !sweepEl.open;
  saveState();
});

// ---------------------------------------------------------------------------------------------------

function renderAll(): void {
  renderTable();
  renderSweep();
  buildChartList();
  invalidateCharts();
}

client.onNotification((msg: ToWebview) => {
  switch (msg.type) {
    case 'snapshot':
      titleEl.textContent = msg.title;
      document.title = msg.title;
      runs = msg.runs;
      differing = msg.differing;
      identical = msg.identical;
      sweep = msg.sweep;
      state.runDirs = runs.map((r) => r.id);
      rowsVersion++;
      saveState();
      messageEl.textContent = msg.problems.length ? `Some files could not be read: ${msg.problems.join('; ')}` : runs.length < 2 ? 'Add another run to compare (Tinker: Compare Runs…).' : '';
      renderAll();
      break;
    case 'run': {
      const i = runs.findIndex((r) => r.id === msg.run.id);
      if (i >= 0) runs[i] = msg.run;
      else runs.push(msg.run);
      sweep = msg.sweep ?? sweep;
      rowsVersion++;
      renderAll();
      break;
    }
    case 'error':
      messageEl.textContent = msg.message;
      break;
  }
});

xAxisEl.value = state.xAxis;
xAxisEl.addEventListener('change', () => {
  state.xAxis = xAxisEl.value as XAxis;
  saveState();
  for (const c of charts.values()) undraw(c);
  // at once (no frame's wait): the plots drawn ahead are shown, the others drawn or asked for; a chart keeps its plot until then
  drawVisible();
});
function showSmoothing(): void {
  smoothingEl.value = String(state.smoothing);
  byId('smoothing-value').textContent = state.smoothing.toFixed(2);
}
smoothingEl.addEventListener('input', () => {
  const v = Number(smoothingEl.value);
  state.smoothing = Number.isFinite(v) ? Math.min(Math.max(v, 0), 0.99) : DEFAULT_SMOOTHING;
  showSmoothing();
  saveState();
  invalidateCharts();
});
if (state.groupSeeds) groupSeedsEl.setAttribute('checked', '');
groupSeedsEl.addEventListener('change', () => {
  state.groupSeeds = isChecked(groupSeedsEl);
  saveState();
  invalidateCharts();
});
showAllEl.addEventListener('change', () => {
  showAll = isChecked(showAllEl);
  renderTable();
});
byId('export').addEventListener('click', exportCsv);
const two = () => [...selected].slice(0, 2) as [string, string];
byId('diff').addEventListener('click', () => {
  if (selected.size === 2) client.post({ type: 'diffConfigs', a: two()[0], b: two()[1] });
});
byId('samples').addEventListener('click', () => {
  if (selected.size === 2) client.post({ type: 'compareSamples', a: two()[0], b: two()[1] });
});
onThemeChange(() => {
  theme = readTheme();
  themeVersion++;
  renderAll();
});
new ResizeObserver(() => {
  knownWidth = undefined;
  invalidateCharts();
}).observe(chartsEl);
showSmoothing();
client.ready();

/** The title of the bare keys' group: SFT's (train_mean_nll …), DPO's (dpo_loss, accuracy, margin …), or both. */
function bareGroupTitle(keys: readonly string[]): string {
  const dpo = keys.includes('dpo_loss');
  const sft = keys.includes('train_mean_nll');
  return dpo && sft ? 'SFT · DPO' : dpo ? 'DPO' : 'SFT';
}
