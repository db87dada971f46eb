// One chart of the metrics panel: a titled section with a uPlot line chart of a few metrics over
// iterations, each drawn smoothed (solid) over its raw values (faint). A chart whose metrics were
// never logged says so instead of drawing empty axes. A click on the plot picks the iteration under
// the cursor (the way into that iteration's group breakdown).
import uPlot from 'uplot';
import type { ChartSpec } from '../../src/protocol/metricsProtocol';
import { integerAxis } from '../../src/protocol/axisTicks';
import { emaSmooth } from '../shared/smoothing';
import { ChartTheme, withAlpha } from '../shared/theme';

export interface ChartData {
  steps: number[];
  column(key: string): Array<number | null>;
}

export interface ChartOptions {
  smoothing: number;
  showRaw: boolean;
  theme: ChartTheme;
  width: number;
}

const HEIGHT = 170;

/** A value for the summary line and legend: 3 significant digits, exponent form when tiny or huge. */
function fmt(v: number | null | undefined): string {
  if (v === null || v === undefined) return '–';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
  return a >= 100 ? v.toFixed(0) : v.toPrecision(3);
}

/** Dollars: cents from a dollar up, three significant figures below (a step on a small model costs a fraction of a cent). */
function usdText(v: number | null | undefined): string {
  if (v === null || v === undefined) return '–';
  if (v === 0) return '$0.00';
  return Math.abs(v) >= 1 ? `$${v.toFixed(2)}` : `$${Number(v.toPrecision(3))}`;
}

/** An axis tick: as short as possible (trailing zeros dropped), so it fits the axis gutter. */
function tick(v: number): string {
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(1).replace('.0e', 'e').replace('e+', 'e');
  const s = a >= 100 ? v.toFixed(0) : v.toPrecision(3);
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

export class ChartView {
  readonly el: HTMLElement;
  private readonly plotEl: HTMLElement;
  private readonly latestEl: HTMLElement;
  private readonly emptyEl: HTMLElement;
  private readonly hintEl: HTMLElement;
  private steps: number[] = [];
  private plot: uPlot | undefined;
  /** what the current plot was built for; a change rebuilds it */
  private shape = '';

  /** the keys it plots, one per line (a chart whose series change is rebuilt) */
  get seriesKeys(): string {
    return this.spec.series.map((s) => s.key).join('\n');
  }

  constructor(
    private readonly spec: ChartSpec,
    parent: HTMLElement,
    /** an iteration was clicked */
    private readonly onPick: (step: number) => void,
  ) {
    this.el = document.createElement('section');
    this.el.className = 'chart';
    this.el.setAttribute('role', 'group');
    const title = document.createElement('h2');
    title.id = `chart-${spec.id}-title`;
    title.textContent = spec.title;
    this.el.setAttribute('aria-labelledby', title.id);
    this.latestEl = document.createElement('div');
    this.latestEl.className = 'latest';
    this.plotEl = document.createElement('div');
    this.plotEl.className = 'plot';
    this.plotEl.setAttribute('role', 'img');
    this.emptyEl = document.createElement('p');
    this.emptyEl.className = 'empty';
    this.emptyEl.textContent = `Not logged yet: ${spec.series.map((s) => s.key).join(', ')}`;
    this.hintEl = document.createElement('div');
    this.hintEl.className = 'hint';
    this.el.append(title, this.latestEl, this.plotEl, this.hintEl, this.emptyEl);
    parent.append(this.el);
  }

  render(data: ChartData, o: ChartOptions): void {
    const present = this.spec.series
      .map((s) => ({ ...s, color: o.theme.palette[s.color], raw: data.column(s.key) }))
      .filter((s) => s.raw.some((v) => v !== null));
    const lastStep = data.steps[data.steps.length - 1];
    // once the run has logged rows, a chart none of whose metrics it logs is left out (an SFT run has
    // no reward or group charts, a GRPO run no NLL); before that every chart says what it waits for
    this.el.hidden = present.length === 0 && data.steps.length > 0;
    if (present.length === 0) {
      this.destroyPlot();
      this.el.classList.add('no-data');
      this.latestEl.textContent = '';
      this.plotEl.removeAttribute('aria-label');
      return;
    }
    this.el.classList.remove('no-data');
    this.steps = data.steps;

    const latest = present.map((s) => {
      let i = s.raw.length - 1;
      while (i >= 0 && s.raw[i] === null) i--;
      return { label: s.label, value: i >= 0 ? s.raw[i] : null, step: i >= 0 ? data.steps[i] : undefined };
    });
    const usd = this.spec.unit === 'usd';
    const show = (v: number | null | undefined) => (usd ? usdText(v) : fmt(v));
    const summary = latest.map((l) => `${l.label} ${show(l.value)}`).join(' · ');
    this.latestEl.textContent = `${summary}${lastStep !== undefined ? ` (iteration ${lastStep})` : ''}`;
    this.plotEl.setAttribute('aria-label', `${this.spec.title}: ${summary}, latest values; ${data.steps.length} iterations`);

    const smoothing = usd ? 0 : o.smoothing;
    const showRaw = o.showRaw && smoothing > 0;
    const columns: uPlot.AlignedData = [
      data.steps,
      ...present.flatMap((s) => [s.raw, smoothing > 0 ? emaSmooth(s.raw, smoothing) : s.raw]),
    ];
    const shape = JSON.stringify([present.map((s) => s.key), showRaw, o.theme, o.width]);
    if (this.plot && shape === this.shape) {
      this.plot.setData(columns);
      return;
    }
    this.destroyPlot();
    this.shape = shape;
    const axis: uPlot.Axis = {
      stroke: o.theme.foreground,
      font: o.theme.font,
      grid: { stroke: o.theme.grid, width: 1 },
      ticks: { stroke: o.theme.grid, width: 1 },
    };
    this.plot = new uPlot(
      {
        width: Math.max(o.width, 200),
        height: HEIGHT,
        scales: { x: { time: false }, y: this.spec.unit === 'fraction' ? { range: [0, 1] } : {} },
        axes: [{ ...axis, ...integerAxis, label: 'iteration', labelFont: o.theme.font, labelSize: 18 }, { ...axis, size: 60, space: 22, values: (_u, ticks) => ticks.map((v) => (usd ? `$${tick(v)}` : tick(v))) }],
        legend: { show: true, live: true },
        cursor: { drag: { x: false, y: false } },
        hooks: {
          ready: [(u) => u.over.addEventListener('click', () => this.pick(u.cursor.idx))],
          setCursor: [(u) => this.showHover(u.cursor.idx)],
        },
        series: [
          { label: 'iteration', value: (_u, v) => (v === null ? '' : String(v)) },
          ...present.flatMap((s): uPlot.Series[] => [
            { label: `${s.label} (raw)`, stroke: withAlpha(s.color, 0.35), width: 1, show: showRaw, spanGaps: true, points: { show: false }, value: (_u, v) => (v === null ? '' : show(v)) },
            { label: s.label, stroke: s.color, width: 2, spanGaps: true, points: { show: data.steps.length < 3 }, value: (_u, v) => (v === null ? '' : show(v)) },
          ]),
        ],
      },
      columns,
      this.plotEl,
    );
  }

  private pick(idx: number | null | undefined): void {
    const step = idx === null || idx === undefined ? undefined : this.steps[idx];
    if (step !== undefined) this.onPick(step);
  }

  private showHover(idx: number | null | undefined): void {
    const step = idx === null || idx === undefined ? undefined : this.steps[idx];
    this.hintEl.textContent = step === undefined ? '' : `iteration ${step} · click to open its groups`;
  }

  private destroyPlot(): void {
    this.plot?.destroy();
    this.plot = undefined;
    this.shape = '';
  }

  destroy(): void {
    this.destroyPlot();
    this.el.remove();
  }
}
