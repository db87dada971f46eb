// The sweep views of Compare Runs: the metric against each swept field (sensitivity) and parallel
// coordinates. SVG: a handful of runs, crisp in both themes.
import { el } from '../shared/dom';
import { colorOf, fmt, saveState, state, sweepEl, view } from './panelState';

const SVG = 'http://www.w3.org/2000/svg';
function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

export function renderSweep(): void {
  sweepEl.hidden = !view.sweep;
  if (!view.sweep) return;
  const colorById = new Map(view.runs.map((r) => [r.id, colorOf(r.color)]));
  const nameById = new Map(view.runs.map((r) => [r.id, r.name]));
  // a summary: the sweep's views fold away (the choice kept with the panel), bringing the charts up under the table
  const summary = el('summary');
  summary.append(el('h2', 'group-title', `Sweep ${view.sweep.name}: ${view.sweep.metric.name} (${view.sweep.metric.goal}) against each swept field`));
  const parts: Element[] = [summary];
  const grid = el('div', 'charts');
  const W = 380;
  const H = 200;
  const pad = { l: 56, r: 12, t: 10, b: 34 };
  for (const f of view.sweep.sensitivity) {
    const box = el('section', 'chart');
    box.setAttribute('aria-label', `sensitivity of ${view.sweep.metric.name} to ${f.field}`);
    const s = svg('svg', { width: W, height: H, role: 'img', 'aria-label': `${view.sweep.metric.name} against ${f.field}: ${f.mean.map((m) => `${f.categories ? f.categories[m.x] : fmt(m.x)} → ${fmt(m.y)}`).join(', ')}` });
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
      if (f.mean.length > 1) s.append(svg('polyline', { points: f.mean.map((m) => `${px(m.x)},${py(m.y)}`).join(' '), fill: 'none', stroke: view.theme.foreground, 'stroke-width': 1.5 }));
      for (const p of f.points) {
        const dot = svg('circle', { cx: px(p.x), cy: py(p.y), r: 4, fill: colorById.get(p.id) ?? view.theme.foreground });
        dot.append(svg('title', {}, `${nameById.get(p.id) ?? p.id}${p.seed !== undefined ? ` (seed ${p.seed})` : ''}: ${fmt(p.y)}`));
        s.append(dot);
      }
    }
    box.append(el('h3', undefined, f.field), s);
    grid.append(box);
  }
  parts.push(grid);
  if (view.sweep.parallel) {
    const pc = view.sweep.parallel;
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
      const line = svg('polyline', { points: pts.join(' '), fill: 'none', stroke: colorById.get(l.id) ?? view.theme.foreground, 'stroke-width': 2, opacity: state.hidden.has(l.id) ? 0.2 : 0.9 });
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

