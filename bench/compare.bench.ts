// The Compare Runs panel at 50 runs × 2,000 steps × 40 metrics (~4 M points, ~150 MB of
// metrics.jsonl), host and webview together. The host side is the panel's own code without vscode
// (columnCache.ts loadColumns, compareView.ts wireRuns / chartLines, configDiff, the zod schemas of
// compareProtocol.ts); the webview is the panel's bundle in headless Chromium
// (/usr/bin/chromium through playwright-core), its messages carried as the VS Code webview carries
// them: JSON each way (here over the DevTools protocol), zod-checked at both ends.
//   1. Node only: the host's loads, cold (no column cache: metrics.jsonl parsed, the cache written)
//      and warm (the binary cache read and checked against metrics.jsonl's first and last bytes),
//      each with the snapshot (table data, config diff) and the `charts` reply for the charts in view
//      (6 keys, each line smoothed then decimated to the width), both JSON round-tripped + zod.
//   2. Chromium, the bundle built as the packaged extension ships it (minified): warm and cold load
//      to the first paint of the table and the charts in view (the page and the host load together
//      as when the panel opens; ends when every chart in the viewport is drawn and a frame has gone
//      by); then, on the painted page, hiding a run (its checkbox: local, no host round trip),
//      changing the x axis (step → wall time → tokens → step) once the panel has drawn the charts on
//      the other axes ahead (it does so when quiet: the change shows a plot), and changing the smoothing
//      (every chart in view asked of the host again: the round trip), each until the next frame
//      after the last chart on screen is redrawn.
// Prints median and worst over REPS; asserts nothing. Wall time, and the host's CPU (this
// process); the renderer's own CPU is not printed (Chromium's TaskDuration metric missed the
// canvas work, which a trace shows on its main thread: TRACE=file.json writes one for an x-axis
// change). Browser frames come at ~60 Hz: a figure that ends "after the next frame" includes up to
// ~16 ms of waiting for it.
//   BENCH=compare node scripts/bench.mjs         RUNS=50 STEPS=2000 METRICS=40 REPS=5 WIDTH=1400 HEIGHT=1000
//   TRACE=x.json (an x-axis change) / TRACE_LOAD=y.json (a warm load): Chromium traces to read; PROFILE=z.cpuprofile: the
//   page's JavaScript during an x-axis change; CHROMIUM_ARGS: extra flags
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { loadColumns, inFolder, type CacheLocation } from '../src/core/experiments/columnCache';
import { chartLines, SmoothedCache, wireRuns, type HeldRun } from '../src/core/experiments/compareView';
import { configDiff } from '../src/protocol/compareData';
import { readDirectoryState } from '../src/core/runs/runDirectory';
import { directoryRunStatus } from '../src/core/runs/runStatus';
import { ChartsParams, CompareRequests, ToWebview } from '../src/protocol/compareProtocol';
import { Envelope } from '../src/protocol/panelProtocol';

const RUNS = Number(process.env.RUNS ?? 50);
const STEPS = Number(process.env.STEPS ?? 2000);
const METRICS = Number(process.env.METRICS ?? 40);
const REPS = Number(process.env.REPS ?? 5);
const VIEW = { width: Number(process.env.WIDTH ?? 1400), height: Number(process.env.HEIGHT ?? 1000) };
const IN_VIEW = 6;
const root = path.resolve(__dirname, '../..');

function makeRuns(parent: string): string[] {
  const keys = ['env/all/reward/total', 'test/env/all/reward/total', 'time/total', 'progress/tokens_trained', 'optim/lr'];
  for (let k = keys.length; k < METRICS; k++) keys.push(`env/all/metric_${k}`);
  const dirs: string[] = [];
  for (let r = 0; r < RUNS; r++) {
    const dir = path.join(parent, `run-${String(r).padStart(2, '0')}`);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_name: 'm', learning_rate: 1e-4 * (1 + (r % 5)), seed: r, lora_rank: 32, sampling: { temperature: 1 } }));
    const fd = fs.openSync(path.join(dir, 'metrics.jsonl'), 'w');
    let tokens = 0;
    for (let s = 0; s < STEPS; s++) {
      tokens += 1000 + ((s * 7 + r) % 100);
      const row: Record<string, number> = { step: s };
      for (const k of keys) row[k] = k === 'progress/tokens_trained' ? tokens : k === 'time/total' ? 1 + ((s + r) % 10) / 10 : Math.sin(s / 50 + r) + s / STEPS;
      fs.writeSync(fd, JSON.stringify(row) + '\n');
    }
    fs.closeSync(fd);
    dirs.push(dir);
  }
  return dirs;
}

/** The host's load of every run, as ComparePanel.loadAll does it: config.json, the columns and the directory's status. */
async function loadHost(dirs: string[], cache: CacheLocation): Promise<{ held: HeldRun[]; sources: string[] }> {
  const loaded = await Promise.all(
    dirs.map(async (d, i) => {
      const config = JSON.parse(await fs.promises.readFile(path.join(d, 'config.json'), 'utf8')) as Record<string, unknown>;
      const c = await loadColumns(d, cache);
      // the status as ComparePanel.statusOf reads it (no window registry here)
      const status = directoryRunStatus(await readDirectoryState(d));
      return { run: { id: d, color: i, config, columns: c.columns, status }, source: c.source };
    }),
  );
  return { held: loaded.map((l) => l.run), sources: loaded.map((l) => l.source) };
}

function snapshotOf(held: HeldRun[]): ToWebview {
  const diff = configDiff(held.map((r) => r.config));
  return { type: 'snapshot', title: `Compare: ${held.length} runs`, runs: wireRuns(held, undefined), differing: diff.differing, identical: diff.identical, problems: [] };
}

const firstKeys = (held: HeldRun[]) => Object.keys(held[0]!.columns.cols).sort().slice(0, IN_VIEW);

/** What the host sends before the first paint, through JSON and the webview's zod checks. */
function hostFirstPaint(held: HeldRun[], smoothed = new SmoothedCache()): { snapshotBytes: number; chartsBytes: number } {
  const snap = JSON.stringify(snapshotOf(held));
  ToWebview.parse(JSON.parse(snap));
  return { snapshotBytes: snap.length, chartsBytes: chartsRoundTrip(held, 'step', smoothed) };
}

/** The `charts` reply for the first charts, as it travels and as the webview takes it (zod: checked and decoded): its JSON's length. */
function chartsRoundTrip(held: HeldRun[], xAxis: 'step' | 'wall' | 'tokens', smoothed: SmoothedCache): number {
  const json = JSON.stringify({ charts: chartLines(held, { keys: firstKeys(held), xAxis, smoothing: 0.6, width: 420 }, smoothed) });
  CompareRequests.charts.result.parse(JSON.parse(json));
  return json.length;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const stats = (xs: number[]) => `median ${median(xs).toFixed(0).padStart(5)} ms, worst ${Math.max(...xs).toFixed(0).padStart(5)} ms`;

/** The panel's bundle as the packaged extension ships it (scripts/build.mjs --production: minified, no source map), built into `dir`. */
async function buildBundle(dir: string): Promise<string> {
  const esbuild = await import('esbuild');
  const out = path.join(dir, 'webview');
  await esbuild.build({ entryPoints: { compare: path.join(root, 'webview/compare/main.ts') }, outdir: out, bundle: true, minify: true, format: 'iife', platform: 'browser', target: 'es2022', logLevel: 'warning' });
  return out;
}

/** The webview page: the bundle, its acquireVsCodeApi wired to this process. */
function pageHtml(dist: string): string {
  const url = (f: string) => `file://${path.join(dist, f)}`;
  return `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8"><link rel="stylesheet" href="${url('compare.css')}">
<style>body { --vscode-font-family: system-ui, sans-serif; --vscode-font-size: 13px; --vscode-foreground: #cccccc; --vscode-editor-background: #1e1e1e; background: #1e1e1e; color: #cccccc; }</style>
</head><body class="vscode-dark"><div id="app"></div><script src="${url('compare.js')}"></script></body></html>`;
}

/** A page whose webview talks to `host` (messages as JSON, each way). */
async function openPage(browser: import('playwright-core').Browser, dir: string, dist: string, onMessage: (msg: unknown, page: Page) => void): Promise<Page> {
  const page = await browser.newPage({ viewport: VIEW });
  const file = path.join(dir, 'compare.html');
  fs.writeFileSync(file, pageHtml(dist));
  page.on('pageerror', (e) => console.log(`[webview] ${e.message}`));
  await page.exposeBinding('__toHost', (_src, json: string) => onMessage(JSON.parse(json), page));
  await page.addInitScript(`{ let state; window.acquireVsCodeApi = () => ({ postMessage: (m) => void window.__toHost(JSON.stringify(m)), getState: () => state, setState: (s) => (state = s) }); }`);
  void page.goto(`file://${file}`);
  return page;
}

/** A message to the webview: JSON text carried to the page (as VS Code carries it to the webview's frame), parsed there and posted. */
function send(page: Page, msg: unknown): void {
  const post = (json: string) => (globalThis as unknown as { postMessage(m: unknown, origin: string): void }).postMessage(JSON.parse(json), '*');
  void page.evaluate(post, JSON.stringify(msg)).catch(() => undefined);
}

/** The panel host's message handling (PanelHost + ComparePanel), over the held runs once loaded. */
function host(loaded: Promise<HeldRun[]>, seen: { readyAt?: number }) {
  const smoothed = new SmoothedCache();
  return (raw: unknown, page: Page) => {
    const env = Envelope.safeParse(raw);
    if (!env.success) return;
    if (env.data.type === 'ready') seen.readyAt ??= performance.now();
    void (async () => {
      const held = await loaded;
      if (env.data.type === 'ready') send(page, snapshotOf(held));
      else if (env.data.type === 'request' && env.data.method === 'charts') {
        const params = ChartsParams.parse(env.data.params);
        send(page, { type: 'reply', id: env.data.id, ok: true, value: { charts: chartLines(held, params, smoothed) } });
      }
    })();
  };
}

// In-page code as text: this bench compiles without the DOM's types (src/core must not see them).
const IN_VIEW_JS = `[...document.querySelectorAll('section.chart')].filter((s) => { const r = s.getBoundingClientRect(); return r.bottom > 0 && r.top < window.innerHeight; })`;
const NEXT_FRAME_JS = `new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))`;

/** In the page: resolves once the table has its rows and every chart in the viewport is drawn, after the next frame. */
async function painted(page: Page, rows: number): Promise<void> {
  await page.waitForFunction(
    `(() => { if (document.querySelectorAll('#runs tbody tr').length !== ${rows}) return false; const v = ${IN_VIEW_JS}; return v.length > 0 && v.every((s) => s.dataset.drawn === '1' && s.querySelector('canvas')); })()`,
    undefined,
    { polling: 'raf', timeout: 120_000 },
  );
  await page.evaluate(NEXT_FRAME_JS);
}

/** Waits until the charts in view have their lines on every x axis (fetched ahead once the panel is quiet). */
async function fetchedAhead(page: Page): Promise<void> {
  await page.waitForFunction(`document.getElementById('charts').dataset.ahead === '1'`, undefined, { polling: 50, timeout: 120_000 });
}

type Act = 'toggle' | 'step' | 'wall' | 'tokens' | 'smoothing 0.5' | 'smoothing 0.6';

/** Times `act` in the page (wall) and the host's CPU during it (this process). */
async function timeAct(page: Page, act: Act): Promise<{ wall: number; cpu: number; sync: number }> {
  const c0 = process.cpuUsage();
  const { wall, sync } = await timeInPage(page, act);
  const c = process.cpuUsage(c0);
  return { wall, sync, cpu: (c.user + c.system) / 1000 };
}

/** In the page: times `act` until the charts in view are drawn again and the next frame has gone by. */
async function timeInPage(page: Page, act: Act): Promise<{ wall: number; sync: number }> {
  const action =
    act === 'toggle'
      ? `document.querySelector('#runs tbody tr input[type=checkbox]').click();`
      : act.startsWith('smoothing')
        ? `const s = document.getElementById('smoothing'); s.value = '${act.split(' ')[1]}'; s.dispatchEvent(new Event('input'));`
        : `const sel = document.getElementById('x-axis'); sel.value = '${act}'; sel.dispatchEvent(new Event('change'));`;
  return page.evaluate(`(async () => {
    const t0 = performance.now();
    ${action}
    const sync = performance.now() - t0;
    await new Promise((resolve) => {
      const done = () => ${IN_VIEW_JS}.every((s) => s.dataset.drawn === '1' && s.querySelector('canvas'));
      if (done()) return resolve();
      const mo = new MutationObserver(() => { if (done()) { mo.disconnect(); resolve(); } });
      mo.observe(document.getElementById('charts'), { subtree: true, attributes: true, attributeFilter: ['data-drawn'] });
    });
    await ${NEXT_FRAME_JS};
    return { wall: performance.now() - t0, sync };
  })()`) as Promise<{ wall: number; sync: number }>;
}

async function main(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-compare-bench-'));
  try {
    const dirs = makeRuns(fs.mkdtempSync(path.join(tmp, 'runs-')));
    const bytes = dirs.reduce((n, d) => n + fs.statSync(path.join(d, 'metrics.jsonl')).size, 0);
    console.log(`load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} cores (figures are wall time)`);
    console.log(`${RUNS} runs × ${STEPS} steps × ${METRICS} metrics: ${(bytes / 1e6).toFixed(0)} MB of metrics.jsonl; ${REPS} reps; ${IN_VIEW} charts' lines in the host figures`);

    // 1. the host alone
    const hostCold: number[] = [];
    const hostWarm: number[] = [];
    const hostColdCpu: number[] = [];
    const hostWarmCpu: number[] = [];
    const cpuSince = (c0: NodeJS.CpuUsage) => {
      const c = process.cpuUsage(c0);
      return (c.user + c.system) / 1000;
    };
    let sizes = { snapshotBytes: 0, chartsBytes: 0 };
    let cacheBytes = 0;
    for (let rep = 0; rep < REPS; rep++) {
      const folder = fs.mkdtempSync(path.join(tmp, 'cache-'));
      const cache = inFolder(folder);
      let t0 = performance.now();
      let c0 = process.cpuUsage();
      const c = await loadHost(dirs, cache);
      sizes = hostFirstPaint(c.held);
      hostCold.push(performance.now() - t0);
      hostColdCpu.push(cpuSince(c0));
      if (c.sources.some((s) => s !== 'built')) throw new Error('the cold load read a cache');
      t0 = performance.now();
      c0 = process.cpuUsage();
      const w = await loadHost(dirs, cache);
      hostFirstPaint(w.held);
      hostWarm.push(performance.now() - t0);
      hostWarmCpu.push(cpuSince(c0));
      if (w.sources.some((s) => s !== 'cached')) throw new Error('the warm load did not use the cache');
      cacheBytes = fs.readdirSync(folder).reduce((n, f) => n + fs.statSync(path.join(folder, f)).size, 0);
    }
    console.log(`host, cold (parse metrics.jsonl, write the cache) + snapshot + 6 charts' lines: ${stats(hostCold)}; CPU ${stats(hostColdCpu)}`);
    console.log(`host, warm (read the cache)                       + snapshot + 6 charts' lines: ${stats(hostWarm)}; CPU ${stats(hostWarmCpu)}`);
    console.log(`  column caches ${(cacheBytes / 1e6).toFixed(0)} MB; snapshot ${(sizes.snapshotBytes / 1e3).toFixed(0)} kB of JSON; 6 charts' lines ${(sizes.chartsBytes / 1e3).toFixed(0)} kB`);
    const held = (await loadHost(dirs, inFolder(fs.mkdtempSync(path.join(tmp, 'cache-'))))).held;
    const smoothed = new SmoothedCache();
    chartsRoundTrip(held, 'step', smoothed); // the first paint smoothed these lines
    for (const axis of ['wall', 'tokens', 'step'] as const) {
      const t: number[] = [];
      const cpu: number[] = [];
      for (let rep = 0; rep < REPS; rep++) {
        const t0 = performance.now();
        const c0 = process.cpuUsage();
        chartsRoundTrip(held, axis, smoothed);
        t.push(performance.now() - t0);
        cpu.push(cpuSince(c0));
      }
      console.log(`host, x axis → ${axis.padEnd(6)}: 6 charts' lines from the columns in memory, JSON, zod, decoded: ${stats(t)}; CPU ${stats(cpu)}`);
    }

    // 2. host + webview in Chromium
    let browser: import('playwright-core').Browser;
    try {
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage', '--allow-file-access-from-files', ...(process.env.CHROMIUM_ARGS ?? '').split(' ').filter(Boolean)] });
    } catch (err) {
      console.log(`Chromium did not start (${err instanceof Error ? err.message.split('\n')[0] : String(err)}): no paint figures`);
      return;
    }
    try {
      const dist = await buildBundle(tmp);
      console.log(`the panel's bundle as shipped (minified): ${(fs.statSync(path.join(dist, 'compare.js')).size / 1e3).toFixed(0)} kB`);
      const run = async (cache: CacheLocation, label: string) => {
        const t0 = performance.now();
        const c0 = process.cpuUsage();
        const loaded = loadHost(dirs, cache).then((h) => {
          if (h.sources.some((s) => s !== label)) throw new Error(`expected a ${label} load, got ${[...new Set(h.sources)].join(', ')}`);
          return h.held;
        });
        const seen: { readyAt?: number } = {};
        const page = await openPage(browser, tmp, dist, host(loaded, seen));
        await painted(page, RUNS);
        const ms = performance.now() - t0;
        const c = process.cpuUsage(c0);
        return { ms, ready: (seen.readyAt ?? NaN) - t0, cpu: (c.user + c.system) / 1000, page };
      };
      const warm: number[] = [];
      const cold: number[] = [];
      const warmCpu: number[] = [];
      const warmReady: number[] = [];
      const coldCpu: number[] = [];
      const toggle: number[] = [];
      const toggleCpu: number[] = [];
      const toggleSync: number[] = [];
      const axis: Record<string, number[]> = { wall: [], tokens: [], step: [] };
      const axisCpu: Record<string, number[]> = { wall: [], tokens: [], step: [] };
      const smooth: number[] = [];
      const smoothCpu: number[] = [];
      let charts = 0;
      for (let rep = 0; rep < REPS; rep++) {
        const folder = fs.mkdtempSync(path.join(tmp, 'cache-'));
        const c = await run(inFolder(folder), 'built');
        cold.push(c.ms);
        coldCpu.push(c.cpu);
        await c.page.close();
        const traceLoad = process.env.TRACE_LOAD && rep === 0;
        if (traceLoad) await browser.startTracing(undefined, { path: process.env.TRACE_LOAD, categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'toplevel', 'cc', 'blink', 'v8', 'loading', 'navigation'] });
        const w = await run(inFolder(folder), 'cached');
        if (traceLoad) await browser.stopTracing();
        warm.push(w.ms);
        warmCpu.push(w.cpu);
        warmReady.push(w.ready);
        charts = (await w.page.evaluate(`document.querySelectorAll('section.chart[data-drawn="1"]').length`)) as number; // on screen at the first paint
        for (let i = 0; i < 2; i++) {
          const t = await timeAct(w.page, 'toggle');
          toggle.push(t.wall);
          toggleCpu.push(t.cpu);
          toggleSync.push(t.sync);
        }
        for (const a of ['wall', 'tokens', 'step'] as const) {
          await fetchedAhead(w.page);
          const trace = process.env.TRACE && rep === 0 && a === 'tokens';
          if (trace) await browser.startTracing(w.page, { path: process.env.TRACE, categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'toplevel', 'cc', 'blink', 'v8'] });
          const profile = process.env.PROFILE && rep === 0 && a === 'tokens' ? await w.page.context().newCDPSession(w.page) : undefined;
          if (profile) {
            await profile.send('Profiler.enable');
            await profile.send('Profiler.setSamplingInterval', { interval: 100 });
            await profile.send('Profiler.start');
          }
          const t = await timeAct(w.page, a);
          if (trace) await browser.stopTracing();
          if (profile) {
            const { profile: p } = await profile.send('Profiler.stop');
            fs.writeFileSync(process.env.PROFILE!, JSON.stringify(p));
            await profile.detach();
          }
          axis[a]!.push(t.wall);
          axisCpu[a]!.push(t.cpu);
        }
        for (const a of ['smoothing 0.5', 'smoothing 0.6'] as const) {
          await fetchedAhead(w.page);
          const t = await timeAct(w.page, a);
          smooth.push(t.wall);
          smoothCpu.push(t.cpu);
        }
        await w.page.close();
      }
      console.log(`Chromium ${VIEW.width}×${VIEW.height}, ${charts} charts on screen at the first paint (those within 200 px of it are drawn a frame later):`);
      console.log(`  warm load to first paint of table + charts in view (host + webview): ${stats(warm)}  [target < 1000 ms]; host CPU ${stats(warmCpu)}`);
      console.log(`    of which the page (new tab, the bundle loaded) up to its ready message: ${stats(warmReady)}`);
      console.log(`  cold load (no column cache) to first paint:                          ${stats(cold)}; host CPU ${stats(coldCpu)}`);
      console.log(`  hide / show a run (local), to the next frame:                        ${stats(toggle)}  [target < 50 ms]; host CPU ${stats(toggleCpu)}; the click's own script ${stats(toggleSync)}`);
      for (const a of ['wall', 'tokens', 'step'] as const) console.log(`  x axis → ${a.padEnd(6)} (drawn ahead while quiet: shown), to the next frame: ${stats(axis[a]!)}  [target < 50 ms]; host CPU ${stats(axisCpu[a]!)}`);
      console.log(`  smoothing 0.6 ↔ 0.5 (every chart in view asked of the host: the round trip), to the next frame: ${stats(smooth)}; host CPU ${stats(smoothCpu)}`);
    } finally {
      await browser.close();
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
