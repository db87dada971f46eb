// The Compare Runs panel's state: the page's skeleton and elements, the state the panel saves, the
// runs of the last snapshot, and the formatting every view shares.
import { PanelClient } from '../shared/client';
import { registerComponents } from '../shared/components';
import { byId, inputById } from '../shared/dom';
import { readTheme } from '../shared/theme';
import { CompareProtocol, type CompareRun, type SweepView } from '../../src/protocol/compareProtocol';
import type { XAxis } from '../../src/protocol/compareData';

registerComponents();
export const client = new PanelClient(CompareProtocol);
export const DEFAULT_SMOOTHING = 0.6;
export const HEIGHT = 190;
/** A run's line: one CSS pixel, a hairline the canvas strokes fast (50 runs × 9 charts at 1.5 px took ~100 ms to rasterise per redraw in software) */
export const LINE_WIDTH = 1;

const app = byId('app');
app.innerHTML = `
  <header><h1 id="title">Compare Runs</h1></header>
  <div class="controls">
    <label for="x-axis">X axis</label>
    <select id="x-axis"><option value="step">step</option><option value="wall">wall time (s)</option><option value="tokens">tokens trained</option><option value="cost" title="each run's cumulative estimated cost: a reward chart reads as reward per dollar">cost $ (estimate): reward per dollar</option></select>
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

export const titleEl = byId('title');
export const messageEl = byId('message');
export const tableEl = byId('runs');
export const chartsEl = byId('charts');
export const sweepEl = byId('sweep') as HTMLDetailsElement;
export const xAxisEl = byId('x-axis') as HTMLSelectElement;
export const smoothingEl = inputById('smoothing');
export const groupSeedsEl = byId('group-seeds');
export const showAllEl = byId('show-all');

const saved = client.getState();
export const state = {
  runDirs: saved?.runDirs ?? [],
  sweepDir: saved?.sweepDir,
  xAxis: (saved?.xAxis ?? 'step') as XAxis,
  smoothing: saved?.smoothing ?? DEFAULT_SMOOTHING,
  hidden: new Set(saved?.hidden ?? []),
  groupSeeds: saved?.groupSeeds ?? false,
  sweepCollapsed: saved?.sweepCollapsed ?? false,
};
/** What the last snapshot (and the runs since) brought, and the table's own choices. */
export const view = {
  runs: [] as CompareRun[],
  differing: [] as string[],
  identical: [] as string[],
  sweep: undefined as SweepView | undefined,
  showAll: false,
  sort: undefined as { col: string; dir: 1 | -1 } | undefined,
  theme: readTheme(),
};
export const selected = new Set<string>();

export function saveState(): void {
  client.setState({ runDirs: state.runDirs, ...(state.sweepDir ? { sweepDir: state.sweepDir } : {}), xAxis: state.xAxis, smoothing: state.smoothing, hidden: [...state.hidden], groupSeeds: state.groupSeeds, sweepCollapsed: state.sweepCollapsed });
}

/** A run's colour: the theme's chart colours first, then hues spread by the golden angle. */
export function colorOf(i: number): string {
  const p = view.theme.palette;
  const base = [p.blue, p.orange, p.green, p.red, p.purple, p.yellow];
  if (i < base.length) return base[i]!;
  const dark = document.body.classList.contains('vscode-dark');
  return `hsl(${Math.round((i * 137.508) % 360)}, 65%, ${dark ? 62 : 42}%)`;
}

export function fmt(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (Number.isInteger(v) && a < 1e9) return String(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
  // four significant digits without trailing zeros: 0.003, not 0.003000 (which a narrow axis clips to "03000")
  return String(Number(v.toPrecision(4)));
}
