// The evaluation results panel: targets × metrics with 95 % intervals (the baseline marked, the best
// of each column bold), a bar chart with interval whiskers, each metric over the training step when
// the targets are a run's checkpoints, and the per-problem matrix (problems × targets coloured by
// mean reward, virtualised), sortable; a cell opens that problem of the baseline and its target in
// the diff editor; What changed and Open in Playground act on the chosen pair of targets.
import '../shared/base.css';
import './evals.css';
import { bestOf, EvalProtocol, EvalSnapshot, MatrixSort, sortProblems, ToWebview } from '../../src/protocol/evalsProtocol';
import { PanelClient } from '../shared/client';
import { byId, el, typedById } from '../shared/dom';
import { VirtualList } from '../breakdown/virtualList';

const client = new PanelClient(EvalProtocol);
const ROW = 22;
const SVG = 'http://www.w3.org/2000/svg';

const app = byId('app');
app.innerHTML = `
  <header>
    <div class="title-row"><h1 id="title">Evaluation</h1><a href="#" id="open-spec">Open spec</a></div>
    <div class="meta muted" id="meta"></div>
    <p id="message" role="status"></p>
  </header>
  <section aria-label="Targets and metrics"><table id="table" class="metrics"></table></section>
  <section class="charts">
    <figure><figcaption id="bars-caption">mean reward (95 % interval)</figcaption><svg id="bars" role="img"></svg>
      <label for="metric">Metric</label> <select id="metric"></select></figure>
    <figure id="curve-figure" hidden><figcaption>over the training step</figcaption><svg id="curve" role="img"></svg></figure>
  </section>
  <section class="matrix-section" aria-label="Per-problem matrix">
    <div class="toolbar" role="toolbar" aria-label="Matrix">
      <label for="sort">Sort problems</label>
      <select id="sort">
        <option value="order">results order</option>
        <option value="regressed">regressed vs baseline</option>
        <option value="disagreement">disagreement</option>
        <option value="hardest">hardest</option>
      </select>
      <label for="before">Compare</label> <select id="before" aria-label="Before"></select>
      <span>→</span> <select id="after" aria-label="After"></select>
      <vscode-button id="what-changed" appearance="secondary" title="Every sample whose reward changed between the two targets, improved first, then regressed">What changed</vscode-button>
      <span id="count" class="muted"></span>
    </div>
    <div class="matrix-head" id="matrix-head"></div>
    <div id="matrix" class="vlist matrix" tabindex="0" role="grid" aria-label="Problems × targets, coloured by mean reward. Arrows move, Enter opens the diff with the baseline, P opens the problem in the playground."></div>
    <p class="muted hint">Click a cell (or Enter) to diff that problem's samples of the baseline and the target; P opens it in the playground.</p>
  </section>`;

const saved = client.getState();
let snap: EvalSnapshot | undefined;
let sort: MatrixSort = saved?.sort ?? 'order';
let pair: [number, number] = saved?.pair ?? [0, 1];
let order: number[] = [];
let active = { row: 0, col: 0 };
let metricIdx = 0;

const sortEl = typedById('sort', HTMLSelectElement);
const beforeEl = typedById('before', HTMLSelectElement);
const afterEl = typedById('after', HTMLSelectElement);
const metricEl = typedById('metric', HTMLSelectElement);
sortEl.value = sort;
const matrixEl = byId('matrix');
const list = new VirtualList(matrixEl, ROW, renderRow);

function save(): void {
  if (snap) client.setState({ dir: snap.dir, sort, pair });
}

function fmt(v: number, percent: boolean): string {
  return percent ? `${(100 * v).toFixed(1)}` : Math.abs(v) >= 100 ? v.toFixed(0) : Number(v.toPrecision(3)).toString();
}

function interval(v: { lo?: number; hi?: number }, percent: boolean): string {
  return v.lo === undefined || v.hi === undefined ? '[no interval]' : `[${fmt(v.lo, percent)}, ${fmt(v.hi, percent)}]`;
}

/** Dollars: cents from a dollar up, three significant figures below. */
function usd(v: number): string {
  return v === 0 ? '$0.00' : v >= 1 ? `$${v.toFixed(2)}` : `$${Number(v.toPrecision(3))}`;
}

function costCell(t: EvalSnapshot['targets'][number]): HTMLElement {
  const td = el('td', 'num cost');
  if (t.costUsd === undefined && t.tokens === undefined) td.textContent = '–';
  else {
    if (t.costUsd !== undefined) td.append(el('span', 'value', usd(t.costUsd)));
    if (t.tokens !== undefined) td.append(el('span', 'interval muted', ` ${Math.round(t.tokens).toLocaleString('en-US')} tokens`));
    td.title = `${t.label}: sampling cost ${t.costUsd !== undefined ? usd(t.costUsd) : 'not priced'} (estimate)${t.tokens !== undefined ? ` for ${Math.round(t.tokens).toLocaleString('en-US')} tokens` : ''}`;
  }
  return td;
}

function pValue(p: number): string {
  return p < 0.001 ? '< 0.001' : p.toFixed(3);
}

/** A cell's colour: green at reward 1, red at 0; an NLL eval's cell by exp(−NLL), the per-token probability. */
function rewardColour(v: number | null, nll = false): string {
  if (v === null) return 'var(--vscode-editorWidget-background)';
  if (nll) v = Math.exp(-v);
  const x = Math.max(0, Math.min(1, v));
  return `color-mix(in srgb, var(--vscode-charts-green) ${Math.round(100 * x)}%, var(--vscode-charts-red))`;
}

/** The matrix as sortProblems reads it, higher better: an NLL eval's values negated. */
function higherIsBetter(s: EvalSnapshot): ReadonlyArray<ReadonlyArray<number | null>> {
  return s.measure === 'nll' ? s.rewards.map((r) => r.map((v) => (v === null ? null : -v))) : s.rewards;
}

function show(s: EvalSnapshot): void {
  snap = s;
  const T = s.targets.length;
  pair = [Math.min(pair[0], Math.max(T - 1, 0)), Math.min(pair[1], Math.max(T - 1, 0))];
  if (saved?.pair === undefined && T > 1 && pair[0] === pair[1]) pair = [s.baseline, s.baseline === 0 ? 1 : 0];
  byId('title').textContent = `Evaluation: ${s.name}`;
  document.title = byId('title').textContent ?? 'Evaluation';
  byId('meta').textContent = `${s.dir} · ${T} targets · ${s.problems.length} ${s.measure === 'nll' ? 'chats (NLL)' : 'problems'}`;
  byId('message').textContent = [s.complete ? '' : 'Incomplete: some requested samples are missing (an eval in progress or cancelled; running the spec again resumes it).', ...s.notes.slice(0, 3), T === 0 ? 'No target has results yet.' : ''].filter(Boolean).join(' ');
  renderTable(s);
  for (const sel of [beforeEl, afterEl]) sel.replaceChildren(...s.targets.map((t, i) => new Option(t.label, String(i))));
  beforeEl.value = String(pair[0]);
  afterEl.value = String(pair[1]);
  metricEl.replaceChildren(...s.metrics.map((m, i) => new Option(m.label, String(i))));
  metricEl.value = String(Math.min(metricIdx, s.metrics.length - 1));
  renderCharts();
  renderMatrixHead(s);
  applySort();
}

function renderTable(s: EvalSnapshot): void {
  const table = byId('table');
  const head = el('tr');
  // samples the grader or environment failed on scored 0: the figures beside them count them as wrong
  const anyFailed = s.targets.some((t) => t.failed);
  const failedHead = el('th', 'num', 'failed');
  failedHead.title = 'Samples the grader or environment failed on (scored 0), of the samples drawn; the first error is above the table';
  head.append(el('th', '', 'target'), ...(anyFailed ? [failedHead] : []), ...s.metrics.map((m) => {
    const th = el('th', 'num', `${m.label}${m.percent ? ' %' : ''}`);
    th.title = `${m.label}: mean over problems with its 95 % bootstrap interval; ${m.goal === 'maximize' ? 'higher' : 'lower'} is better`;
    return th;
  }));
  const best = s.metrics.map((m) => bestOf(m));
  // evals written before usage was recorded have no cost: no column then
  const anyCost = s.targets.some((t) => t.costUsd !== undefined || t.tokens !== undefined);
  const rows = s.targets.map((t, ti) => {
    const tr = el('tr', ti === s.baseline ? 'baseline' : '');
    const name = el('th', 'target', t.label);
    name.scope = 'row';
    if (ti === s.baseline) name.append(el('span', 'badge', 'baseline'));
    const failed = el('td', `num${t.failed ? ' negative' : ''}`, `${t.failed ?? 0}/${t.samples}`);
    tr.append(name, ...(anyFailed ? [failed] : []), ...s.metrics.map((m, mi) => {
      const v = m.values[ti];
      const td = el('td', `num${best[mi] === ti ? ' best' : ''}`);
      if (!v) td.textContent = '–';
      else {
        td.append(el('span', 'value', fmt(v.mean, m.percent)), el('span', 'interval muted', ` ${interval(v, m.percent)}`));
        td.title = `${t.label} · ${m.label}: ${fmt(v.mean, m.percent)} (95 % interval ${interval(v, m.percent)})${best[mi] === ti ? ' · best' : ''}`;
      }
      return td;
    }));
    const c = s.comparisons[ti];
    const vs = el('td', 'num vs');
    if (ti === s.baseline) vs.textContent = '—';
    else if (!c) vs.textContent = '–';
    else {
      const sign = c.diff.mean > 0 ? '+' : '';
      // a difference whose interval excludes 0 is coloured by whether it is better (a lower NLL is)
      const above = c.diff.lo !== undefined && c.diff.lo > 0;
      const below = c.diff.hi !== undefined && c.diff.hi < 0;
      const [better, worse] = s.measure === 'nll' ? [below, above] : [above, below];
      vs.append(
        el('span', `value ${better ? 'positive' : worse ? 'negative' : ''}`, `${sign}${fmt(c.diff.mean, false)}`),
        el('span', 'interval muted', ` ${interval(c.diff, false)} · p ${pValue(c.p)}${c.mcnemar !== undefined ? ` · McNemar ${pValue(c.mcnemar)}` : ''} · ${c.wins}/${c.losses}/${c.ties}`),
      );
      vs.title = `${t.label} − baseline, ${s.measure === 'nll' ? `mean per-chat NLL difference (negative: lower NLL, better) on ${c.problems} chats` : `mean per-problem reward difference on ${c.problems} problems`}: ${sign}${fmt(c.diff.mean, false)} (paired 95 % interval ${interval(c.diff, false)}); permutation test p = ${c.p}${c.mcnemar !== undefined ? `; exact McNemar p = ${c.mcnemar}` : ''}; wins ${c.wins}, losses ${c.losses}, ties ${c.ties}`;
    }
    tr.append(vs);
    if (anyCost) tr.append(costCell(t));
    return tr;
  });
  const vsHead = el('th', 'num', 'vs baseline (W/L/T)');
  vsHead.title = 'Mean per-problem reward difference against the baseline with its paired 95 % interval, the paired permutation test p-value, and problems won/lost/tied';
  head.append(vsHead);
  if (anyCost) {
    const costHead = el('th', 'num', 'sampling cost (estimate)');
    costHead.title = "Each target's sampling in this eval: estimated dollars from the price table in force, and its tokens (prompt and sampled); an estimate, not a bill";
    head.append(costHead);
  }
  const thead = el('thead');
  thead.append(head);
  const tbody = el('tbody');
  tbody.append(...rows);
  table.replaceChildren(thead, tbody);
}

function svgEl<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function renderCharts(): void {
  if (!snap) return;
  const m = snap.metrics[metricIdx];
  const bars = byId('bars') as unknown as SVGSVGElement;
  bars.replaceChildren();
  if (!m) return;
  byId('bars-caption').textContent = `${m.label}${m.percent ? ' %' : ''} (95 % interval)`;
  const W = 420;
  const barH = 22;
  const H = snap.targets.length * (barH + 6) + 10;
  bars.setAttribute('viewBox', `0 0 ${W} ${H}`);
  bars.setAttribute('height', String(H));
  const hi = Math.max(1e-9, ...m.values.map((v) => (v ? v.hi ?? v.mean : 0)));
  const left = 150;
  const x = (v: number) => left + ((W - left - 50) * Math.max(0, v)) / hi;
  const desc: string[] = [];
  snap.targets.forEach((t, i) => {
    const v = m.values[i];
    const y = 5 + i * (barH + 6);
    bars.append(svgEl('text', { x: left - 6, y: y + barH / 2 + 4, 'text-anchor': 'end', class: 'label' }, t.label.length > 22 ? `…${t.label.slice(-21)}` : t.label));
    if (!v) return;
    bars.append(svgEl('rect', { x: left, y, width: Math.max(1, x(v.mean) - left), height: barH, class: i === snap!.baseline ? 'bar baseline' : 'bar' }));
    const cy = y + barH / 2;
    if (v.lo !== undefined && v.hi !== undefined) {
      bars.append(svgEl('line', { x1: x(v.lo), x2: x(v.hi), y1: cy, y2: cy, class: 'whisker' }));
      for (const e of [v.lo, v.hi]) bars.append(svgEl('line', { x1: x(e), x2: x(e), y1: cy - 5, y2: cy + 5, class: 'whisker' }));
    }
    bars.append(svgEl('text', { x: x(v.hi ?? v.mean) + 4, y: cy + 4, class: 'value' }, fmt(v.mean, m.percent)));
    desc.push(`${t.label} ${fmt(v.mean, m.percent)} ${interval(v, m.percent)}`);
  });
  bars.setAttribute('aria-label', `${m.label}: ${desc.join('; ')}`);
  renderCurve();
}

/** The metric over the training step, when at least two targets are checkpoints with steps. */
function renderCurve(): void {
  const fig = byId('curve-figure');
  const curve = byId('curve') as unknown as SVGSVGElement;
  curve.replaceChildren();
  const m = snap?.metrics[metricIdx];
  const pts = snap && m ? snap.targets.flatMap((t, i) => (t.step !== undefined && m.values[i] ? [{ step: t.step, v: m.values[i]!, label: t.label }] : [])).sort((a, b) => a.step - b.step) : [];
  fig.hidden = pts.length < 2;
  if (fig.hidden || !m) return;
  const W = 420;
  const H = 180;
  const pad = { l: 40, r: 10, t: 10, b: 24 };
  curve.setAttribute('viewBox', `0 0 ${W} ${H}`);
  curve.setAttribute('height', String(H));
  const s0 = pts[0]!.step;
  const s1 = Math.max(pts.at(-1)!.step, s0 + 1);
  const lo = Math.min(...pts.map((p) => p.v.lo ?? p.v.mean));
  const hi = Math.max(...pts.map((p) => p.v.hi ?? p.v.mean), lo + 1e-9);
  const x = (s: number) => pad.l + ((W - pad.l - pad.r) * (s - s0)) / (s1 - s0);
  const y = (v: number) => H - pad.b - ((H - pad.t - pad.b) * (v - lo)) / (hi - lo);
  const band = pts.map((p) => `${x(p.step)},${y(p.v.hi ?? p.v.mean)}`).concat([...pts].reverse().map((p) => `${x(p.step)},${y(p.v.lo ?? p.v.mean)}`));
  curve.append(svgEl('polygon', { points: band.join(' '), class: 'band' }));
  curve.append(svgEl('polyline', { points: pts.map((p) => `${x(p.step)},${y(p.v.mean)}`).join(' '), class: 'line' }));
  const best = pts.reduce((b, p) => ((m.goal === 'maximize' ? p.v.mean > b.v.mean : p.v.mean < b.v.mean) ? p : b));
  for (const p of pts) {
    const c = svgEl('circle', { cx: x(p.step), cy: y(p.v.mean), r: p === best ? 5 : 3, class: p === best ? 'point peak' : 'point' });
    c.append(svgEl('title', {}, `step ${p.step} · ${fmt(p.v.mean, m.percent)} ${interval(p.v, m.percent)}`));
    curve.append(c);
  }
  curve.append(svgEl('text', { x: pad.l, y: H - 6, class: 'label' }, `step ${s0}`), svgEl('text', { x: W - pad.r, y: H - 6, 'text-anchor': 'end', class: 'label' }, `step ${s1}`));
  curve.append(svgEl('text', { x: 2, y: pad.t + 8, class: 'label' }, fmt(hi, m.percent)), svgEl('text', { x: 2, y: H - pad.b, class: 'label' }, fmt(lo, m.percent)));
  curve.setAttribute('aria-label', `${m.label} over the training step: ${pts.map((p) => `step ${p.step} ${fmt(p.v.mean, m.percent)}`).join(', ')}; best at step ${best.step}`);
}

function renderMatrixHead(s: EvalSnapshot): void {
  const head = byId('matrix-head');
  head.replaceChildren(el('span', 'pid', 'problem'), ...s.targets.map((t, i) => {
    const c = el('span', `cell-head${i === s.baseline ? ' baseline' : ''}`, t.label.length > 12 ? `…${t.label.slice(-11)}` : t.label);
    c.title = t.label + (i === s.baseline ? ' (baseline)' : '');
    return c;
  }));
}

function applySort(): void {
  if (!snap) return;
  order = sortProblems(higherIsBetter(snap), snap.baseline, sort, snap.problems.length);
  byId('count').textContent = `${snap.problems.length} problems`;
  active = { row: Math.min(active.row, Math.max(order.length - 1, 0)), col: Math.min(active.col, Math.max(snap.targets.length - 1, 0)) };
  list.setCount(order.length);
  save();
}

function renderRow(i: number): HTMLElement {
  const s = snap!;
  const p = order[i]!;
  const row = el('div', 'row');
  row.setAttribute('role', 'row');
  row.append(el('span', 'pid', s.problems[p]!));
  s.targets.forEach((t, ti) => {
    const v = s.rewards[ti]![p] ?? null;
    const cell = el('span', 'cell');
    cell.setAttribute('role', 'gridcell');
    cell.id = `cell-${i}-${ti}`;
    cell.style.background = rewardColour(v, s.measure === 'nll');
    cell.textContent = v === null ? '' : Number(v.toPrecision(2)).toString();
    cell.title = `${s.problems[p]} · ${t.label}: ${s.measure === 'nll' ? 'NLL per token' : 'mean reward'} ${v === null ? '–' : v}`;
    if (active.row === i && active.col === ti) cell.classList.add('active');
    cell.addEventListener('click', () => {
      active = { row: i, col: ti };
      openDiff();
      list.refresh();
    });
    row.append(cell);
  });
  return row;
}

function openDiff(): void {
  if (!snap) return;
  const p = order[active.row];
  if (p === undefined) return;
  const t = active.col;
  const other = t === snap.baseline ? (pair[1] !== t ? pair[1] : pair[0]) : snap.baseline;
  client.post({ type: 'diff', problemId: snap.problems[p]!, left: other, right: t });
}

function onMessage(msg: ToWebview): void {
  if (msg.type === 'snapshot') show(msg);
  else byId('message').textContent = msg.message;
}

client.onNotification(onMessage);
sortEl.addEventListener('change', () => {
  const v = MatrixSort.safeParse(sortEl.value);
  sort = v.success ? v.data : 'order';
  applySort();
});
beforeEl.addEventListener('change', () => {
  pair = [Number(beforeEl.value), pair[1]];
  save();
});
afterEl.addEventListener('change', () => {
  pair = [pair[0], Number(afterEl.value)];
  save();
});
metricEl.addEventListener('change', () => {
  metricIdx = Number(metricEl.value);
  renderCharts();
});
byId('what-changed').addEventListener('click', () => client.post({ type: 'whatChanged', before: pair[0], after: pair[1] }));
byId('open-spec').addEventListener('click', (e) => {
  e.preventDefault();
  client.post({ type: 'openSpec' });
});
matrixEl.addEventListener('keydown', (e) => {
  if (!snap) return;
  const T = snap.targets.length;
  const move = (row: number, col: number) => {
    active = { row: Math.max(0, Math.min(order.length - 1, row)), col: Math.max(0, Math.min(T - 1, col)) };
    list.scrollIntoView(active.row);
    matrixEl.setAttribute('aria-activedescendant', `cell-${active.row}-${active.col}`);
  };
  if (e.key === 'ArrowDown') move(active.row + 1, active.col);
  else if (e.key === 'ArrowUp') move(active.row - 1, active.col);
  else if (e.key === 'ArrowLeft') move(active.row, active.col - 1);
  else if (e.key === 'ArrowRight') move(active.row, active.col + 1);
  else if (e.key === 'PageDown') move(active.row + 15, active.col);
  else if (e.key === 'PageUp') move(active.row - 15, active.col);
  else if (e.key === 'Home') move(0, active.col);
  else if (e.key === 'End') move(order.length - 1, active.col);
  else if (e.key === 'Enter' || e.key === ' ') openDiff();
  else if (e.key === 'p' || e.key === 'P') {
    const p = order[active.row];
    if (p !== undefined) client.post({ type: 'openInPlayground', problemId: snap.problems[p]!, target: active.col });
  } else return;
  e.preventDefault();
});

client.ready();
