// The metrics panel: live charts of a run's metrics.jsonl (reward, no-signal groups, KL, entropy,
// tokens, truncation, holdout reward, time; a DPO run's loss, pair accuracy, margin and rewards) with EMA smoothing. It asks the host for a snapshot
// when it loads (also after being hidden or a window reload) and then merges appended rows. A click
// on a chart point asks the host to open that iteration's group breakdown.
import 'uplot/dist/uPlot.min.css';
import '../shared/base.css';
import './metrics.css';
import { PanelClient } from '../shared/client';
import { isChecked, registerComponents } from '../shared/components';
import { byId, frameScheduler, inputById, onThemeChange } from '../shared/dom';
import { CHARTS, dpoCharts, inlineEvalCharts, teacherKlCharts, MetricRow, MetricsProtocol, RunInfo, ToWebview } from '../../src/protocol/metricsProtocol';
import { readTheme } from '../shared/theme';
import { renderFindings } from '../shared/findings';
import { diagnoseMetrics } from '../../src/protocol/doctor';
import { progressText } from '../../src/protocol/runProgress';
import { errorText } from '../../src/protocol/panelProtocol';
import { mergeStepRow } from '../../src/protocol/metricsRows';
import { ChartView } from './chartView';

registerComponents();
const client = new PanelClient(MetricsProtocol);

const DEFAULT_SMOOTHING = 0.6;

const app = document.getElementById('app');
if (!app) throw new Error('metrics panel: #app is missing');
app.innerHTML = `
  <header class="run">
    <div class="title-row">
      <h1 id="run-name">Metrics</h1>
      <vscode-badge id="run-status"></vscode-badge>
      <vscode-progress-ring id="running" aria-label="Run in progress" hidden></vscode-progress-ring>
    </div>
    <div class="meta" id="run-meta"></div>
    <section class="findings" id="findings" aria-label="Run doctor" role="status" hidden></section>
  </header>
  <div class="controls">
    <label for="smoothing">Smoothing</label>
    <input type="range" id="smoothing" min="0" max="0.99" step="0.01" />
    <output id="smoothing-value" for="smoothing"></output>
    <vscode-checkbox id="show-raw" checked>Show raw values</vscode-checkbox>
    <vscode-button id="reveal" appearance="secondary">Open Run Folder</vscode-button>
    <vscode-button id="wandb" appearance="secondary" hidden>Open in W&amp;B</vscode-button>
  </div>
  <vscode-divider role="separator"></vscode-divider>
  <div class="message-row"><p id="message" role="status"></p><vscode-button id="show-log" appearance="secondary" hidden>Show Log</vscode-button></div>
  <main id="charts" class="charts" aria-label="Charts"></main>`;

const nameEl = byId('run-name');
const statusEl = byId('run-status');
const runningEl = byId('running');
const metaEl = byId('run-meta');
const wandbEl = byId('wandb');
const messageEl = byId('message');
const showLogEl = byId('show-log');
const chartsEl = byId('charts');
const smoothingEl = inputById('smoothing');
const smoothingValueEl = byId('smoothing-value');
const showRawEl = byId('show-raw');

const saved = client.getState();
let runDir = saved?.runDir;
let smoothing = saved?.smoothing ?? DEFAULT_SMOOTHING;
let showRaw = true;
const rows = new Map<number, Record<string, number | null>>();
const charts = CHARTS.map((spec) => new ChartView(spec, chartsEl, (step) => void openIteration(step)));
/** the charts of the run's inline evaluators, added as their keys first appear */
const evalCharts = new Map<string, ChartView>();
const keysSeen = new Set<string>();
let theme = readTheme();

function saveState(): void {
  if (runDir) client.setState({ runDir, smoothing });
}

function showSmoothing(): void {
  smoothingEl.value = String(smoothing);
  smoothingValueEl.textContent = smoothing.toFixed(2);
  smoothingEl.setAttribute('aria-valuetext', smoothing === 0 ? 'off' : smoothing.toFixed(2));
}

const scheduleRender = frameScheduler(() => render());

async function openIteration(step: number): Promise<void> {
  try {
    await client.request('openIteration', { step });
  } catch (err) {
    messageEl.textContent = `Could not open iteration ${step}: ${errorText(err)}`;
  }
}

function render(): void {
  const steps = [...rows.keys()].sort((a, b) => a - b);
  const data = {
    steps,
    column: (key: string) => steps.map((s) => rows.get(s)?.[key] ?? null),
  };
  renderFindings(byId('findings'), diagnoseMetrics(steps, data.column));
  // the DPO charts, the teacher-KL chart (distillation, KL penalty) and the inline evaluators' charts, as their keys appear
  for (const spec of [...dpoCharts(keysSeen), ...teacherKlCharts(keysSeen), ...inlineEvalCharts(keysSeen)]) {
    const known = evalCharts.get(spec.id);
    if (known && known.seriesKeys === spec.series.map((x) => x.key).join('\n')) continue;
    known?.el.remove();
    const view = new ChartView(spec, chartsEl, (step) => void openIteration(step));
    // a DPO run's own charts come first: the GRPO charts above them stay hidden for it
    if (spec.id.startsWith('dpo-') && charts[0]) chartsEl.insertBefore(view.el, charts[0].el);
    evalCharts.set(spec.id, view);
  }
  for (const chart of [...charts, ...evalCharts.values()]) {
    chart.render(data, { smoothing, showRaw, theme, width: Math.max(chart.el.clientWidth - 2, 200) });
  }
}

function merge(incoming: MetricRow[]): void {
  for (const r of incoming) {
    rows.set(r.step, mergeStepRow(rows.get(r.step), r.values));
    for (const k of Object.keys(r.values)) keysSeen.add(k);
  }
}

function showRun(run: RunInfo): void {
  nameEl.textContent = run.name;
  document.title = `Metrics: ${run.name}`;
  statusEl.textContent = run.status;
  statusEl.setAttribute('aria-label', `status ${run.status}`);
  statusEl.dataset.status = run.status.replace(/\s+/g, '-');
  runningEl.hidden = run.status !== 'running';
  const parts: string[] = [];
  if (run.model) parts.push(run.model);
  if (run.progress) {
    parts.push(progressText({ unit: 'iteration', ...run.progress }));
  }
  parts.push(run.dir);
  if (run.wandbUrl) parts.push(`W&B: ${run.wandbUrl}`);
  metaEl.textContent = parts.join(' · ');
  wandbEl.hidden = !run.wandbUrl;
  wandbEl.title = run.wandbUrl ?? '';
}

function onMessage(msg: ToWebview): void {
  switch (msg.type) {
    case 'snapshot':
      runDir = msg.run.dir;
      saveState();
      rows.clear();
      keysSeen.clear();
      merge(msg.rows);
      showRun(msg.run);
      messageEl.textContent =
        (msg.rows.length === 0 ? 'No metrics logged yet; charts fill in as iterations finish. ' : '') +
        (msg.problems.length ? `${msg.problems.length} unreadable line(s) in metrics.jsonl were left out; the log names them.` : '');
      showLogEl.hidden = msg.problems.length === 0;
      scheduleRender();
      break;
    case 'append':
      merge(msg.rows);
      if (rows.size > 0 && messageEl.textContent?.startsWith('No metrics')) messageEl.textContent = '';
      scheduleRender();
      break;
    case 'run':
      showRun(msg.run);
      break;
    case 'error':
      messageEl.textContent = msg.message;
      showLogEl.hidden = false;
      break;
  }
}

client.onNotification(onMessage);

smoothingEl.addEventListener('input', () => {
  const v = Number(smoothingEl.value);
  smoothing = Number.isFinite(v) ? Math.min(Math.max(v, 0), 0.99) : DEFAULT_SMOOTHING;
  showSmoothing();
  saveState();
  scheduleRender();
});
showRawEl.addEventListener('change', () => {
  showRaw = isChecked(showRawEl);
  scheduleRender();
});
byId('reveal').addEventListener('click', () => client.post({ type: 'revealRunDir' }));
wandbEl.addEventListener('click', () => client.post({ type: 'openWandb' }));
showLogEl.addEventListener('click', () => client.post({ type: 'showLog' }));

// Canvases must be redrawn with the new theme's colours.
onThemeChange(() => {
  theme = readTheme();
  scheduleRender();
});
new ResizeObserver(() => scheduleRender()).observe(chartsEl);

showSmoothing();
client.ready();
