// The model card: one version of the workspace's model registry. Its MODELS.md entry as fields
// (paths, base model, renderer, LoRA rank), the training recipe, the training data, the status
// history and the checkpoint's expiry; the promotion gate's verdict against production; and each
// suite metric across the model's versions with its 95 % interval drawn (a small SVG per entry).
// The buttons are plain <button>s (Tab and Enter/Space reach them); every action runs in the host.
import '../shared/base.css';
import './modelcard.css';
import { CardAction, MetricSeriesView, ModelCardProtocol, ModelCardSnapshot, seriesRange, ToWebview } from '../../src/protocol/modelCardProtocol';
import { PanelClient } from '../shared/client';
import { byId, el } from '../shared/dom';

const client = new PanelClient(ModelCardProtocol);
const SVG = 'http://www.w3.org/2000/svg';

const app = byId('app');
app.innerHTML = `
  <header>
    <div class="title-row"><h1 id="title">Model</h1><span id="status" class="status"></span></div>
    <div class="meta muted" id="meta"></div>
    <p id="expiry" class="flag" role="alert" hidden></p>
    <div class="actions" role="toolbar" aria-label="Model version" id="actions"></div>
    <p id="message" role="status"></p>
  </header>
  <section aria-labelledby="gate-h" id="gate-section" hidden><h2 id="gate-h">Promotion gate</h2><ul id="gate" class="reasons"></ul></section>
  <section aria-labelledby="metrics-h"><h2 id="metrics-h">Suite metrics across versions</h2><div id="suite" class="muted"></div><div id="charts" class="charts"></div></section>
  <section aria-labelledby="model-h"><h2 id="model-h">Model</h2><dl id="fields" class="fields"></dl></section>
  <section aria-labelledby="recipe-h"><h2 id="recipe-h">Training recipe</h2><div id="recipe"></div></section>
  <section aria-labelledby="data-h"><h2 id="data-h">Training data</h2><div id="data"></div></section>
  <section aria-labelledby="history-h"><h2 id="history-h">Status history</h2><div id="history"></div></section>
  <details id="md"><summary>MODELS.md entry</summary><pre id="markdown"></pre></details>`;

const BUTTONS: Array<{ action: CardAction; label: string; title: string; show: (s: ModelCardSnapshot) => boolean }> = [
  { action: 'promote', label: 'Promote…', title: 'Promote this version (to production through the suite gate)', show: (s) => s.can.promote },
  { action: 'runSuite', label: 'Run Suite', title: 'Run the suite on this version (background, cancellable)', show: () => true },
  { action: 'compare', label: 'Compare with Production', title: 'The suite results of this version and of production, paired on the same items', show: (s) => s.can.compare },
  { action: 'openInPlayground', label: 'Open in Playground', title: "Sample this version's sampler weights in the playground", show: (s) => s.can.playground },
  { action: 'copyPath', label: 'Copy Path', title: "Copy the version's tinker:// path", show: () => true },
  { action: 'retire', label: 'Retire…', title: 'Retire this version', show: (s) => s.can.retire },
  { action: 'openModelsMd', label: 'Open MODELS.md', title: 'The registry as a person reads it', show: () => true },
];

function fmt(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : Number(v.toPrecision(3)).toString();
}

function interval(e: { value: number; lo?: number; hi?: number }): string {
  return e.lo === undefined || e.hi === undefined ? fmt(e.value) : `${fmt(e.value)} [${fmt(e.lo)}, ${fmt(e.hi)}]`;
}

function button(action: CardAction, label: string, title: string): HTMLButtonElement {
  const b = el('button', 'action', label);
  b.type = 'button';
  b.title = title;
  b.dataset['action'] = action;
  b.addEventListener('click', () => client.post({ type: 'action', action }));
  return b;
}

function table(id: string, head: string[], rows: string[][], empty: string): void {
  const box = byId(id);
  if (rows.length === 0) {
    box.replaceChildren(el('p', 'muted', empty));
    return;
  }
  const t = el('table', 'grid');
  const thead = el('thead');
  const tr = el('tr');
  tr.append(...head.map((h) => el('th', '', h)));
  thead.append(tr);
  const tbody = el('tbody');
  tbody.append(...rows.map((r) => {
    const row = el('tr');
    row.append(...r.map((c) => el('td', '', c)));
    return row;
  }));
  t.append(thead, tbody);
  box.replaceChildren(t);
}

function svgEl<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** One entry's metric over the versions: a point per version with its interval as a whisker. */
function chart(s: MetricSeriesView): HTMLElement {
  const fig = el('figure', 'chart');
  const cap = el('figcaption', '', `${s.entry} · ${s.metric} (${s.goal === 'maximize' ? 'higher' : 'lower'} is better) · ${s.layer}`);
  const W = 360;
  const H = 150;
  const pad = { l: 48, r: 36, t: 10, b: 34 };
  const svg = svgEl('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', tabindex: 0 });
  const { lo, hi } = seriesRange(s.points);
  const lows = s.points.map((p) => p.estimate.lo ?? p.estimate.value);
  const highs = s.points.map((p) => p.estimate.hi ?? p.estimate.value);
  const n = s.points.length;
  const x = (i: number) => pad.l + ((W - pad.l - pad.r) * (n === 1 ? 0.5 : i / (n - 1)));
  const y = (v: number) => H - pad.b - ((H - pad.t - pad.b) * (v - lo)) / (hi - lo || 1);
  svg.append(svgEl('line', { x1: pad.l, x2: W - pad.r, y1: H - pad.b, y2: H - pad.b, class: 'axis' }));
  // the lowest and highest interval ends, as dotted guides with their values
  for (const v of n ? [Math.min(...lows), Math.max(...highs)] : []) {
    svg.append(svgEl('line', { x1: pad.l, x2: W - pad.r, y1: y(v), y2: y(v), class: 'guide' }), svgEl('text', { x: pad.l - 4, y: y(v) + 3, 'text-anchor': 'end', class: 'label' }, fmt(v)));
  }
  if (n > 1) svg.append(svgEl('polyline', { points: s.points.map((p, i) => `${x(i)},${y(p.estimate.value)}`).join(' '), class: 'line' }));
  s.points.forEach((p, i) => {
    const cx = x(i);
    const g = svgEl('g', { class: `point ${p.status}${p.current ? ' current' : ''}` });
    if (p.estimate.lo !== undefined && p.estimate.hi !== undefined) {
      g.append(svgEl('line', { x1: cx, x2: cx, y1: y(p.estimate.lo), y2: y(p.estimate.hi), class: 'whisker' }));
      for (const e of [p.estimate.lo, p.estimate.hi]) g.append(svgEl('line', { x1: cx - 4, x2: cx + 4, y1: y(e), y2: y(e), class: 'whisker' }));
    }
    g.append(svgEl('circle', { cx, cy: y(p.estimate.value), r: p.current ? 5 : 3.5, class: 'dot' }));
    g.append(svgEl('title', {}, `${p.id} (${p.status}): ${interval(p.estimate)}, n = ${p.n}`));
    const version = p.id.includes('@') ? p.id.slice(p.id.lastIndexOf('@') + 1) : p.id;
    g.append(svgEl('text', { x: cx, y: H - pad.b + 14, 'text-anchor': 'middle', class: p.current ? 'label current' : 'label' }, version));
    g.append(svgEl('text', { x: cx, y: H - pad.b + 26, 'text-anchor': 'middle', class: 'label status-word' }, p.status));
    svg.append(g);
  });
  svg.setAttribute('aria-label', `${s.entry} ${s.metric} by version: ${s.points.map((p) => `${p.id} ${p.status} ${interval(p.estimate)} n ${p.n}`).join('; ')}`);
  fig.append(cap, svg);
  return fig;
}

function show(s: ModelCardSnapshot): void {
  byId('title').textContent = s.id;
  document.title = s.id;
  const status = byId('status');
  status.textContent = s.status;
  status.className = `status ${s.status}`;
  byId('meta').textContent = s.registryFile;
  const expiry = byId('expiry');
  expiry.hidden = !s.expiry;
  expiry.replaceChildren();
  if (s.expiry) {
    expiry.className = s.expiry.flagged ? 'flag' : 'muted';
    expiry.append(el('span', '', `${s.expiry.flagged ? '⚠ This production model’s checkpoint expires' : 'The checkpoint expires'} ${s.expiry.at}. `));
    if (s.can.clearTtl) expiry.append(button('clearTtl', 'Clear TTL', 'Keep the checkpoint without expiry'));
  }
  byId('actions').replaceChildren(...BUTTONS.filter((b) => b.show(s)).map((b) => button(b.action, b.label, b.title)));
  byId('message').textContent = '';
  const gateSection = byId('gate-section');
  gateSection.hidden = !s.gate;
  if (s.gate) {
    byId('gate-h').textContent = `Promotion gate against ${s.gate.against}: ${s.gate.passed ? 'passes' : 'refuses'}`;
    byId('gate').replaceChildren(...s.gate.reasons.map((r) => el('li', r.passed ? 'positive' : 'negative', `${r.passed ? '✓' : '✗'} ${r.text}`)));
  }
  byId('suite').textContent = s.suite ? `suite ${s.suite.name}, version ${s.suite.version}` : 'No suite result yet: Run Suite measures this version.';
  byId('charts').replaceChildren(...s.metrics.map(chart));
  const fields = byId('fields');
  fields.replaceChildren(...s.fields.flatMap((f) => [el('dt', '', f.label), el('dd', '', f.value)]));
  table('recipe', ['kind', 'run', 'learning rate', 'steps', ''], s.recipe.map((r) => [r.kind, r.run, r.learning_rate === undefined ? '–' : String(r.learning_rate), r.steps === undefined ? '–' : String(r.steps), r.detail ?? '']), 'No training recipe recorded.');
  table('data', ['file', 'lines', 'sha256'], s.data.map((d) => [d.file, d.lines === undefined ? '–' : String(d.lines), d.sha256 ? `${d.sha256.slice(0, 16)}…` : '–']), 'No training data recorded.');
  table('history', ['when', 'status', 'by', 'why'], [...s.history].reverse().map((h) => [h.at, h.status, h.by ?? '', `${h.anyway ? 'Promoted anyway: ' : ''}${h.reason ?? ''}`]), 'No history.');
  byId('markdown').textContent = s.markdown;
  client.setState({ id: s.id, registryFile: s.registryFile });
}

function onMessage(msg: ToWebview): void {
  if (msg.type === 'snapshot') show(msg);
  else byId('message').textContent = msg.message;
}

client.onNotification(onMessage);
client.ready();
