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
import { isChecked } from '../shared/components';
import { byId, onThemeChange } from '../shared/dom';
import { readTheme } from '../shared/theme';
import type { ToWebview } from '../../src/protocol/compareProtocol';
import type { XAxis } from '../../src/protocol/compareData';
import { DEFAULT_SMOOTHING, chartsEl, client, groupSeedsEl, messageEl, saveState, selected, showAllEl, smoothingEl, state, titleEl, view, xAxisEl } from './panelState';
import { renderTable, exportCsv } from './table';
import { buildChartList, charts, chartsResized, drawVisible, invalidateCharts, rowsChanged, themeChanged, undraw } from './charts';
import { renderSweep } from './sweep';

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
      view.runs = msg.runs;
      view.differing = msg.differing;
      view.identical = msg.identical;
      view.sweep = msg.sweep;
      state.runDirs = view.runs.map((r) => r.id);
      rowsChanged();
      saveState();
      messageEl.textContent = msg.problems.length ? `Some files could not be read: ${msg.problems.join('; ')}` : view.runs.length < 2 ? 'Add another run to compare (Tinker: Compare Runs…).' : '';
      renderAll();
      break;
    case 'run': {
      const i = view.runs.findIndex((r) => r.id === msg.run.id);
      if (i >= 0) view.runs[i] = msg.run;
      else view.runs.push(msg.run);
      view.sweep = msg.sweep ?? view.sweep;
      rowsChanged();
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
  view.showAll = isChecked(showAllEl);
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
  view.theme = readTheme();
  themeChanged();
  renderAll();
});
new ResizeObserver(() => {
  chartsResized();
}).observe(chartsEl);
showSmoothing();
client.ready();
