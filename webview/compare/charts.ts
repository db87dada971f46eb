// The Compare Runs charts: one per metric, every run a line in its colour, x = step / wall time /
// tokens trained, EMA smoothing, seed bands. The snapshot has no points: the charts scrolled into
// view ask the host for theirs, again when the x axis, the smoothing or the width changes, or a run's
// rows grow; once the panel is quiet each chart in view is drawn on the other x axes too (hidden
// plots). A click on a point opens that run's group breakdown at that iteration.
import uPlot from 'uplot';
import { el, frameScheduler } from '../shared/dom';
import { withAlpha } from '../shared/theme';
import type { DecodedChartLines } from '../../src/protocol/compareProtocol';
import { BARE_KEYS_GROUP, metricGroupsOfKeys, seedBand, type XAxis } from '../../src/protocol/compareData';
import { errorText } from '../../src/protocol/panelProtocol';
import { integerAxis } from '../../src/protocol/axisTicks';
import { METRIC } from '../../src/protocol/metricKeys';
import { HEIGHT, LINE_WIDTH, chartsEl, client, colorOf, fmt, messageEl, state, view } from './panelState';

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

export const charts = new Map<string, Chart>();
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
/** The x axes drawn: the cost axis only once some run logs its cost (or it is the one chosen). */
function xAxes(): XAxis[] {
  return state.xAxis === 'cost' || view.runs.some((r) => r.keys.includes(METRIC.costTotal)) ? [...X_AXES, 'cost'] : X_AXES;
}
const X_LABEL: Record<XAxis, string> = { step: 'step', wall: 'wall time (s)', tokens: 'tokens trained', cost: 'cost $ (estimate)' };
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

export function buildChartList(): void {
  const groups = metricGroupsOfKeys(view.runs.map((r) => r.keys));
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
    chartsEl.append(el('h2', 'group-title', g.group === BARE_KEYS_GROUP ? bareGroupTitle(g.keys) : g.group));
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
export function undraw(c: Chart): void {
  c.drawn = false;
  delete c.el.dataset.drawn;
}

export function invalidateCharts(): void {
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
export function drawVisible(): void {
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
  const current = new Set(xAxes().map((a) => linesKey(width, a)));
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
    for (const axis of xAxes()) {
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
export function showHidden(): void {
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
  const byId = new Map(view.runs.map((r) => [r.id, r]));
  const present = lines.runs.filter((l) => byId.has(l.id));
  const series: uPlot.Series[] = [{ label: X_LABEL[axis] }];
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
  const shape = JSON.stringify([series.map((s) => [s.label, s.stroke, s.width]), bands.length, width, view.theme, state.groupSeeds]);
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
    const tick: uPlot.Axis = { stroke: view.theme.foreground, font: view.theme.font, grid: { stroke: view.theme.grid, width: 1 }, ticks: { stroke: view.theme.grid, width: 1 } };
    const made: Plot = { ...drawn, el: holder, shape, u: undefined as unknown as uPlot };
    made.u = new uPlot(
      {
        width,
        height: HEIGHT,
        scales: { x: { time: false } },
        // steps and tokens are counts: whole-number ticks (wall time and dollars have fractions)
        axes: [{ ...tick, ...(axis === 'wall' || axis === 'cost' ? {} : integerAxis) }, { ...tick, size: 56, values: (_u, t) => t.map((v) => fmt(v)) }],
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
  return { runId: info.runId, step, name: view.runs.find((r) => r.id === info.runId)?.name ?? '' };
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

/** The runs' rows changed: every chart's lines are asked for again. */
export function rowsChanged(): void {
  rowsVersion++;
}

/** The theme changed: every plot is drawn again. */
export function themeChanged(): void {
  themeVersion++;
}

/** The grid was resized: the plot width is read again. */
export function chartsResized(): void {
  knownWidth = undefined;
  invalidateCharts();
}

/** The title of the bare keys' group: SFT's (train_mean_nll …), DPO's (dpo_loss, accuracy, margin …), or both. */
function bareGroupTitle(keys: readonly string[]): string {
  const dpo = keys.includes('dpo_loss');
  const sft = keys.includes('train_mean_nll');
  return dpo && sft ? 'SFT · DPO' : dpo ? 'DPO' : 'SFT';
}
