// The suite results panel: one table of the suite's entries grouped by layer (training, benchmark,
// product), each entry's metric with its 95 % interval and n on one checkpoint; for Compare Suites both
// checkpoints side by side, the paired difference (better positive) with its interval, and the gate's
// verdict with its reasons. Entry names open that entry's eval results; everything is a link or a
// button, so the keyboard reaches it all.
import '../shared/base.css';
import './suite.css';
import { isPercentMetric, rowsByLayer, SuiteProtocol, SuiteRowView, SuiteSnapshot, ToWebview } from '../../src/protocol/suiteProtocol';
import type { Estimate } from '../../src/protocol/evalsProtocol';
import { PanelClient } from '../shared/client';
import { byId, el } from '../shared/dom';

const client = new PanelClient(SuiteProtocol);

const app = byId('app');
app.innerHTML = `
  <header>
    <div class="title-row"><h1 id="title">Suite</h1><a href="#" id="open-suite">Open suite file</a></div>
    <div class="meta muted" id="meta"></div>
    <p id="verdict" role="status"></p>
    <ul id="columns" class="columns" aria-label="Checkpoints"></ul>
    <p id="message" role="status"></p>
  </header>
  <section aria-label="Suite entries by layer"><table id="table" class="suite"></table></section>
  <p class="muted hint">Each value: the metric with its 95 % bootstrap interval [lo, hi] and n, the items behind it. An entry's name opens its eval results.</p>`;

const LAYER_TITLE: Record<string, string> = { training: 'Training', benchmark: 'Benchmark', product: 'Product' };

function fmt(v: number, percent: boolean): string {
  return percent ? (100 * v).toFixed(1) : Math.abs(v) >= 100 ? v.toFixed(0) : Number(v.toPrecision(3)).toString();
}

function interval(v: Estimate, percent: boolean): string {
  return v.lo === undefined || v.hi === undefined ? '[no interval]' : `[${fmt(v.lo, percent)}, ${fmt(v.hi, percent)}]`;
}

function link(text: string, title: string, onClick: () => void, className = ''): HTMLAnchorElement {
  const a = el('a', className, text);
  a.href = '#';
  a.title = title;
  a.addEventListener('click', (e) => {
    e.preventDefault();
    onClick();
  });
  return a;
}

function show(s: SuiteSnapshot): void {
  client.setState({ suiteFile: s.suite.file, checkpoints: s.columns.map((c) => c.path) });
  const compare = s.columns.length === 2;
  byId('title').textContent = `${compare ? 'Compare Suites' : 'Suite'}: ${s.suite.name}`;
  document.title = byId('title').textContent ?? 'Suite';
  byId('meta').textContent = `${s.suite.file} · version ${s.suite.version} · ${s.rows.length} entries`;
  const verdict = byId('verdict');
  verdict.className = s.passed === undefined ? '' : s.passed ? 'pass' : 'fail';
  verdict.textContent =
    s.passed === undefined ? '' : s.passed ? `Gate passes: every entry of ${s.columns[0]!.label} holds against ${s.columns[1]!.label}.` : `Gate fails: ${s.rows.filter((r) => r.comparison && !r.comparison.passed).length} of ${s.rows.length} entries do not hold against ${s.columns[1]!.label}.`;
  byId('columns').replaceChildren(
    ...s.columns.map((c, i) => {
      const li = el('li');
      li.append(el('span', 'col-label', `${compare ? (i === 0 ? 'A (candidate)' : 'B (production)') : 'Checkpoint'}: ${c.label}`));
      if (c.path !== c.label) li.append(el('span', 'muted', ` ${c.path}`));
      const state = !c.hasResult ? 'no result' : !c.complete ? 'incomplete' : c.stale.length ? 'stale' : '';
      if (state) {
        li.append(el('span', `badge ${state === 'stale' ? 'warn' : ''}`, state));
        li.append(' ', link(c.hasResult ? 'Resume run' : 'Run suite', `Run suite ${s.suite.name} on ${c.path} (what is done is kept)`, () => client.post({ type: 'run', column: i })));
      }
      if (c.stale.length) li.title = c.stale.join('\n');
      return li;
    }),
  );
  byId('message').textContent = s.notes.slice(0, 3).join(' ');
  renderTable(s);
}

function valueCell(row: SuiteRowView, i: number, label: string): HTMLTableCellElement[] {
  const v = row.values[i];
  const percent = isPercentMetric(row.metric);
  const td = el('td', 'num');
  const n = el('td', 'num muted');
  if (!v) {
    td.textContent = '–';
    n.textContent = '–';
  } else {
    td.append(el('span', 'value', fmt(v.estimate.mean, percent)), el('span', 'interval muted', ` ${interval(v.estimate, percent)}`));
    td.title = `${label} · ${row.entry} · ${row.metric}${percent ? ' %' : ''}: ${fmt(v.estimate.mean, percent)} (95 % interval ${interval(v.estimate, percent)}) over ${v.n} items; ${row.goal === 'maximize' ? 'higher' : 'lower'} is better`;
    n.textContent = String(v.n);
  }
  return [td, n];
}

function renderTable(s: SuiteSnapshot): void {
  const compare = s.columns.length === 2;
  const head = el('tr');
  const th = (text: string, cls = '', title = '') => {
    const h = el('th', cls, text);
    h.scope = 'col';
    if (title) h.title = title;
    return h;
  };
  head.append(th('entry'), th('metric'), th('gate', '', 'The gate against production: non-inferiority (the lower bound of the paired difference’s 95 % interval ≥ −δ) and/or an absolute floor or ceiling'));
  s.columns.forEach((c, i) => head.append(th(compare ? (i === 0 ? 'A' : 'B') : c.label, 'num col-head', `${c.label}${c.path !== c.label ? ` (${c.path})` : ''}`), th('n', 'num')));
  if (compare) head.append(th('A − B (better +)', 'num', 'Paired difference on the items both have, oriented so that better is positive, with its 95 % interval'), th('gate verdict'));
  const thead = el('thead');
  thead.append(head);
  const bodies = rowsByLayer(s.rows).map((g) => {
    const tbody = el('tbody', `layer layer-${g.layer}`);
    const lh = el('tr', 'layer-head');
    const cell = el('th', '', LAYER_TITLE[g.layer] ?? g.layer);
    cell.scope = 'rowgroup';
    cell.colSpan = 3 + 2 * s.columns.length + (compare ? 2 : 0);
    lh.append(cell);
    tbody.append(lh);
    for (const r of g.rows) {
      const tr = el('tr');
      tr.dataset.entry = r.entry;
      const name = el('th', 'entry');
      name.scope = 'row';
      const col = r.values.findIndex(Boolean);
      if (col >= 0) name.append(link(r.entry, `Open the eval results of ${r.entry} on ${s.columns[col]!.label}`, () => client.post({ type: 'openEntry', entry: r.entry, column: col })));
      else name.textContent = r.entry;
      const metric = el('td', 'nowrap', `${r.metric}${isPercentMetric(r.metric) ? ' %' : ''}`);
      metric.title = `${r.goal === 'maximize' ? 'higher' : 'lower'} is better`;
      tr.append(name, metric, el('td', 'muted nowrap', r.gate));
      s.columns.forEach((c, i) => tr.append(...valueCell(r, i, c.label)));
      tbody.append(tr);
      if (compare) {
        tr.append(...comparisonCells(r));
        // the gate's reasons under the entry, across the table, so the numbers stay in their columns
        const why = el('tr', 'reasons-row');
        why.append(el('td'));
        const cellAll = el('td');
        cellAll.colSpan = 2 + 2 * s.columns.length + 2;
        const reasons = el('ul', 'reasons');
        for (const check of r.comparison?.checks ?? []) reasons.append(el('li', check.passed ? '' : 'fail', check.reason));
        cellAll.append(reasons);
        why.append(cellAll);
        tbody.append(why);
      }
    }
    return tbody;
  });
  byId('table').replaceChildren(thead, ...bodies);
}

function comparisonCells(r: SuiteRowView): HTMLTableCellElement[] {
  const c = r.comparison;
  const diff = el('td', 'num');
  const verdict = el('td', 'verdict');
  if (!c) {
    diff.textContent = '–';
    verdict.textContent = '–';
    return [diff, verdict];
  }
  if (c.diff) {
    const percent = isPercentMetric(r.metric);
    const sign = c.diff.mean > 0 ? '+' : '';
    diff.append(el('span', `value ${c.diff.lo !== undefined && c.diff.lo > 0 ? 'positive' : c.diff.hi !== undefined && c.diff.hi < 0 ? 'negative' : ''}`, `${sign}${fmt(c.diff.mean, percent)}`), el('span', 'interval muted', ` ${interval(c.diff, percent)}`));
    diff.title = `A − B on ${c.items ?? 0} items (better positive): ${sign}${fmt(c.diff.mean, percent)} with 95 % interval ${interval(c.diff, percent)}`;
  } else diff.textContent = '–';
  verdict.append(el('span', `mark ${c.passed ? 'pass' : 'fail'}`, c.passed ? '✓ pass' : '✗ fail'));
  verdict.title = c.checks.map((x) => x.reason).join('\n');
  return [diff, verdict];
}

client.onNotification((msg: ToWebview) => {
  if (msg.type === 'snapshot') show(msg);
  else {
    byId('message').textContent = msg.message;
  }
});
byId('open-suite').addEventListener('click', (e) => {
  e.preventDefault();
  client.post({ type: 'openSuite' });
});

client.ready();
