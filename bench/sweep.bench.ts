// A sweep under load, as the extension host runs one: 8 short GRPO runs on the arithmetic example with
// max_concurrent 8, the runs driven by runSweep (the core code the extension host and the CLI run) in
// this one Node process, the embedded engine in its own process as the extension starts it
// (dist/engine.js through startEngineProcess). Per repetition (one per sampling seed): wall time, the
// event-loop delay of this process while the sweep runs (perf_hooks.monitorEventLoopDelay, 10 ms
// resolution: p50, p99, max), and for every run the steps in its metrics.jsonl — each step must
// appear exactly once (lost or repeated steps are printed). Then the mean and worst p99 and max.
// Beside it, a control: an idle Node process measuring its own event-loop delay over the same sweep,
// so that what the machine's load alone costs (on a shared 2-core machine, often tens of ms) is told
// apart from what the sweep's own code blocks. Also this process's event-loop utilisation.
// Asserts nothing (exit code 1 if a step was lost or repeated).
//   BENCH=sweep node scripts/bench.mjs     RUNS=8 ITERS=4 GROUPS=4 GROUP_SIZE=4 SEEDS=1,2,3
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { runSweep } from '../src/core/experiments/runSweep';
import { ServiceClient } from '../src/core/tinker/client';
import { startEngineProcess } from '../src/engine/launcher';

const RUNS = Number(process.env.RUNS ?? 8);
const ITERS = Number(process.env.ITERS ?? 4);
const GROUPS = Number(process.env.GROUPS ?? 4);
const GROUP_SIZE = Number(process.env.GROUP_SIZE ?? 4);
const SEEDS = (process.env.SEEDS ?? '1,2,3').split(',').map(Number);
const ROOT = path.resolve(__dirname, '../..');
const EXAMPLE = path.join(ROOT, 'examples/arithmetic');
const ENGINE = path.join(ROOT, 'dist/engine.js');

interface Rep {
  seed: number;
  control: { p99: number; max: number };
  elu: number;
  wallS: number;
  p50: number;
  p99: number;
  max: number;
  bad: string[];
  steps: number;
}

/** An idle Node process measuring its event-loop delay until told to stop: the machine's share of the delay. */
function startControl(): { stop: () => Promise<{ p99: number; max: number }> } {
  const code = `const h = require('node:perf_hooks').monitorEventLoopDelay({ resolution: 10 }); h.enable(); process.stdin.on('data', () => { h.disable(); process.stdout.write(JSON.stringify({ p99: h.percentile(99) / 1e6, max: h.max / 1e6 })); process.exit(0); });`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    stop: async () => {
      child.stdin.write('stop\n');
      await done;
      return JSON.parse(out) as { p99: number; max: number };
    },
  };
}

async function main(): Promise<void> {
  if (!fs.existsSync(ENGINE)) throw new Error(`${ENGINE} is missing: run "npm run build" first`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-sweep-bench-'));
  for (const f of ['arith.grpo.json', 'train.jsonl', 'holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(EXAMPLE, f), path.join(dir, f));
  const engine = await startEngineProcess({ entry: ENGINE, dataDir: path.join(dir, 'engine') });
  const lrs = Array.from({ length: RUNS }, (_, i) => Number((0.001 * (i + 1)).toFixed(4)));
  console.log(`sweep: ${RUNS} GRPO runs (arith-gpt, ${ITERS} iterations of ${GROUPS} groups × ${GROUP_SIZE}) at max_concurrent ${RUNS}; runSweep in this process, the engine in its own (pid ${engine.pid})`);
  console.log('seed  wall s  loop delay p50 ms  p99 ms  max ms  loop busy  idle control p99 / max ms  steps  lost/repeated');
  const reps: Rep[] = [];
  try {
    for (const seed of SEEDS) {
      const file = path.join(dir, `load-${seed}.sweep.json`);
      fs.writeFileSync(
        file,
        JSON.stringify({
          base: 'arith.grpo.json',
          method: 'grid',
          max_concurrent: RUNS,
          parameters: {
            learning_rate: { values: lrs },
            iterations: { value: ITERS },
            groups_per_batch: { value: GROUPS },
            group_size: { value: GROUP_SIZE },
            eval_every: { value: 0 },
            save_every: { value: 0 },
            sampling_seed: { value: seed },
            'reward.workers': { value: 1 },
          },
          metric: { name: 'env/all/reward/total', goal: 'maximize' },
        }),
      );
      const runsDir = path.join(dir, 'runs');
      const control = startControl();
      const h = monitorEventLoopDelay({ resolution: 10 });
      h.enable();
      const elu0 = performance.eventLoopUtilization();
      const t0 = performance.now();
      // the start (until every run has started: specs, datasets, reward workers, clients) apart from the steps
      let started = 0;
      let startPhase: { p99: number; max: number } | undefined;
      const r = await runSweep({
        onEvent: (_p, e) => {
          if (e.type !== 'started' || ++started < RUNS) return;
          startPhase = { p99: h.percentile(99) / 1e6, max: h.max / 1e6 };
          h.reset();
        },
        sweepFile: file,
        runsDir,
        connect: () => ServiceClient.connect({ baseUrl: engine.url, apiKey: engine.apiKey, clientVersion: 'bench' }),
        cacheDir: path.join(dir, 'cache'),
      });
      const wallS = (performance.now() - t0) / 1000;
      const elu = performance.eventLoopUtilization(elu0).utilization;
      h.disable();
      const ctl = await control.stop();
      const bad: string[] = [];
      let steps = 0;
      for (const o of r.outcomes) {
        const lines = fs.existsSync(path.join(o.dir, 'metrics.jsonl')) ? fs.readFileSync(path.join(o.dir, 'metrics.jsonl'), 'utf8').split('\n').filter((l) => l.trim() !== '') : [];
        const seen = lines.map((l) => (JSON.parse(l) as { step: number }).step);
        steps += seen.length;
        const want = Array.from({ length: ITERS }, (_, i) => i);
        if (o.status !== 'completed') bad.push(`${o.name}: ${o.status}${o.error ? ` (${o.error})` : ''}`);
        if (JSON.stringify(seen) !== JSON.stringify(want)) bad.push(`${o.name}: steps ${JSON.stringify(seen)}`);
      }
      const ms = (ns: number) => ns / 1e6;
      console.log(`      start phase (until all ${RUNS} runs started): loop delay p99 ${startPhase?.p99.toFixed(1)} ms, max ${startPhase?.max.toFixed(1)} ms; the steps after it: below`);
      const rep: Rep = { seed, control: ctl, elu, wallS, p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max), bad, steps };
      reps.push(rep);
      console.log(
        `${String(seed).padStart(4)}  ${wallS.toFixed(1).padStart(6)}  ${rep.p50.toFixed(1).padStart(17)}  ${rep.p99.toFixed(1).padStart(6)}  ${rep.max.toFixed(1).padStart(6)}  ${`${(elu * 100).toFixed(0)} %`.padStart(9)}  ${`${ctl.p99.toFixed(1)} / ${ctl.max.toFixed(1)}`.padStart(26)}  ${`${steps}/${RUNS * ITERS}`.padStart(5)}  ${bad.length ? bad.join('; ') : 'none'}`,
      );
    }
    const mean = (f: (r: Rep) => number) => reps.reduce((a, r) => a + f(r), 0) / reps.length;
    const worst = (f: (r: Rep) => number) => Math.max(...reps.map(f));
    console.log(`event-loop delay over ${reps.length} sweeps: p99 mean ${mean((r) => r.p99).toFixed(1)} ms, worst ${worst((r) => r.p99).toFixed(1)} ms; max mean ${mean((r) => r.max).toFixed(1)} ms, worst ${worst((r) => r.max).toFixed(1)} ms; wall mean ${mean((r) => r.wallS).toFixed(1)} s`);
    console.log(`idle control process (the machine's load alone): p99 mean ${mean((r) => r.control.p99).toFixed(1)} ms, worst ${worst((r) => r.control.p99).toFixed(1)} ms; max worst ${worst((r) => r.control.max).toFixed(1)} ms; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`);
    const lost = reps.reduce((a, r) => a + r.bad.length, 0);
    console.log(lost ? `LOST OR REPEATED STEPS in ${lost} run(s)` : `every run: steps 0..${ITERS - 1}, each once in metrics.jsonl`);
    if (lost) process.exitCode = 1;
  } finally {
    await engine.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
