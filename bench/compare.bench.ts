// The Compare Runs panel's data work at 50 runs × 2,000 steps × 40 metrics (~4 M points): cold load
// (no column cache: metrics.jsonl parsed, the cache written), warm load (the cache read and checked
// against metrics.jsonl), each followed by what the panel does before its first paint: the result
// columns, the config diff, the snapshot's JSON round trip (the webview transport clones it) and the
// zod check the webview client runs on it. Then, per interaction, the chart data of the charts in view
// (6 charts: x values, EMA smoothing, alignment on the union of x): toggling a run off, changing the x
// axis to wall time and to tokens trained. Runs in Node: uPlot's canvas paint in the browser is NOT
// included (not measured here). Prints ms; asserts nothing.
//   BENCH=compare node scripts/bench.mjs         RUNS=50 STEPS=2000 METRICS=40 REPS=5
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadColumns, inFolder } from '../src/core/experiments/columnCache';
import { alignSeries, configDiff, runResults, xValues, type RunColumns, type XAxis } from '../src/protocol/compareData';
import { ToWebview } from '../src/protocol/compareProtocol';
import { emaSmooth } from '../webview/shared/smoothing';

const RUNS = Number(process.env.RUNS ?? 50);
const STEPS = Number(process.env.STEPS ?? 2000);
const METRICS = Number(process.env.METRICS ?? 40);
const REPS = Number(process.env.REPS ?? 5);
const IN_VIEW = 6;

function makeRuns(root: string): string[] {
  const keys = ['env/all/reward/total', 'test/env/all/reward/total', 'time/total', 'progress/tokens_trained', 'optim/lr'];
  for (let k = keys.length; k < METRICS; k++) keys.push(`env/all/metric_${k}`);
  const dirs: string[] = [];
  for (let r = 0; r < RUNS; r++) {
    const dir = path.join(root, `run-${String(r).padStart(2, '0')}`);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_name: 'm', learning_rate: 1e-4 * (1 + (r % 5)), seed: r, lora_rank: 32, sampling: { temperature: 1 } }));
    const lines: string[] = [];
    let tokens = 0;
    for (let s = 0; s < STEPS; s++) {
      tokens += 1000 + ((s * 7 + r) % 100);
      const row: Record<string, number> = { step: s };
      for (const k of keys) row[k] = k === 'progress/tokens_trained' ? tokens : k === 'time/total' ? 1 + ((s + r) % 10) / 10 : Math.sin(s / 50 + r) + s / STEPS;
      lines.push(JSON.stringify(row));
    }
    fs.writeFileSync(path.join(dir, 'metrics.jsonl'), lines.join('\n') + '\n');
    dirs.push(dir);
  }
  return dirs;
}

function firstPaintData(dirs: string[], cols: RunColumns[]): void {
  const runs = cols.map((c, i) => ({ id: dirs[i]!, name: path.basename(dirs[i]!), color: i, status: 'completed' as const, config: {}, results: runResults(c), seedGroup: String(i), steps: c.steps, cols: c.cols }));
  const diff = configDiff(dirs.map((d) => JSON.parse(fs.readFileSync(path.join(d, 'config.json'), 'utf8'))));
  const msg = { type: 'snapshot', title: 't', runs, differing: diff.differing, identical: diff.identical, problems: [] };
  ToWebview.parse(JSON.parse(JSON.stringify(msg)));
}

function chartsInView(cols: RunColumns[], hidden: Set<number>, axis: XAxis): number {
  const keys = Object.keys(cols[0]!.cols).slice(0, IN_VIEW);
  let points = 0;
  for (const key of keys) {
    const a = alignSeries(cols.filter((_, i) => !hidden.has(i)).map((c) => ({ x: xValues(c, axis), y: emaSmooth(c.cols[key]!, 0.6) })));
    points += a.x.length * a.ys.length;
  }
  return points;
}

function time<T>(f: () => T): { ms: number; value: T } {
  const t0 = performance.now();
  const value = f();
  return { ms: performance.now() - t0, value };
}

async function timeAsync<T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await f();
  return { ms: performance.now() - t0, value };
}

const stats = (xs: number[]) => `mean ${(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(1)} ms, worst ${Math.max(...xs).toFixed(1)} ms`;

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-compare-bench-'));
  try {
    const dirs = makeRuns(root);
    const bytes = dirs.reduce((n, d) => n + fs.statSync(path.join(d, 'metrics.jsonl')).size, 0);
    console.log(`${RUNS} runs × ${STEPS} steps × ${METRICS} metrics: ${(bytes / 1e6).toFixed(0)} MB of metrics.jsonl; ${REPS} reps`);
    const cold: number[] = [];
    const warm: number[] = [];
    const paintData: number[] = [];
    let cols: RunColumns[] = [];
    for (let rep = 0; rep < REPS; rep++) {
      const cache = inFolder(fs.mkdtempSync(path.join(root, 'cache-')));
      const c = await timeAsync(() => Promise.all(dirs.map((d) => loadColumns(d, cache))));
      if (c.value.some((x) => x.source !== 'built')) throw new Error('cold load read a cache');
      const w = await timeAsync(() => Promise.all(dirs.map((d) => loadColumns(d, cache))));
      if (w.value.some((x) => x.source !== 'cached')) throw new Error('warm load did not use the cache');
      cols = w.value.map((x) => x.columns);
      const p = time(() => firstPaintData(dirs, cols));
      cold.push(c.ms + p.ms);
      warm.push(w.ms + p.ms);
      paintData.push(p.ms);
    }
    console.log(`cold load (no cache: parse, write the cache) + first-paint data: ${stats(cold)}`);
    console.log(`warm load (cache present) + first-paint data:                   ${stats(warm)}  [target < 1000 ms incl. the browser's paint, not measured here]`);
    console.log(`  of which first-paint data (results, diff, snapshot clone + zod): ${stats(paintData)}`);
    for (const [what, hidden, axis] of [
      ['toggle a run off (step axis)', new Set([3]), 'step'],
      ['x axis → wall time', new Set<number>(), 'wall'],
      ['x axis → tokens trained', new Set<number>(), 'tokens'],
    ] as const) {
      const t: number[] = [];
      let points = 0;
      for (let rep = 0; rep < REPS; rep++) {
        const r = time(() => chartsInView(cols, hidden as Set<number>, axis));
        t.push(r.ms);
        points = r.value;
      }
      console.log(`${what.padEnd(30)} ${IN_VIEW} charts in view, ${points} cells: ${stats(t)}  [target < 50 ms incl. paint, paint not measured]`);
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

void main();
