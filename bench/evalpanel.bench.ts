// The evaluation results panel's first paint at 5 targets × 5,000 problems (n = 4), as the panel
// does it: the host reading summary.json through results.ts's zod schema and preparing the snapshot
// (src/core/evals/resultsView.ts), the snapshot's JSON round trip (the webview's message transport
// clones it), the zod check the webview client runs on it, and the matrix's order under each sort.
// Apart: the targets' samples read for the diffs (after the first paint). Runs in Node: the browser's
// layout and paint of the table, the two charts and one screenful of matrix rows are not included.
// Prints ms (median and worst of REPS); asserts nothing. Target: first paint < 300 ms.
//   BENCH=evalpanel node scripts/bench.mjs       TARGETS=5 PROBLEMS=5000 N=4 REPS=5
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readAllTargetSamples, readEvalSnapshot } from '../src/core/evals/resultsView';
import { MatrixSort, sortProblems, ToWebview } from '../src/protocol/evalsProtocol';
import { writeEvalResults } from '../test/suite/evals/evalFixture';

const TARGETS = Number(process.env.TARGETS ?? 5);
const PROBLEMS = Number(process.env.PROBLEMS ?? 5000);
const N = Number(process.env.N ?? 4);
const REPS = Number(process.env.REPS ?? 5);

function stats(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${s[Math.floor(s.length / 2)]!.toFixed(1)} ms, worst ${s.at(-1)!.toFixed(1)} ms`;
}

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-evalpanel-'));
  try {
    const dir = writeEvalResults(path.join(root, 'evals', 'bench'), { checkpoints: TARGETS - 1, problems: PROBLEMS, n: N });
    const summaryBytes = fs.statSync(path.join(dir, 'summary.json')).size;
    console.log(`evalpanel: ${TARGETS} targets × ${PROBLEMS} problems × n=${N}; summary.json ${(summaryBytes / 2 ** 20).toFixed(1)} MiB`);
    const host: number[] = [];
    const clone: number[] = [];
    const zod: number[] = [];
    const sorts: Record<string, number[]> = {};
    const total: number[] = [];
    let bytes = 0;
    for (let r = 0; r < REPS; r++) {
      const t0 = performance.now();
      const snap = await readEvalSnapshot(dir);
      const t1 = performance.now();
      const json = JSON.stringify(snap);
      bytes = json.length;
      const copy: unknown = JSON.parse(json);
      const t2 = performance.now();
      const parsed = ToWebview.parse(copy);
      const t3 = performance.now();
      if (parsed.type !== 'snapshot') throw new Error('not a snapshot');
      let firstSort = 0;
      for (const s of MatrixSort.options) {
        const a = performance.now();
        sortProblems(parsed.rewards, parsed.baseline, s, parsed.problems.length);
        const d = performance.now() - a;
        (sorts[s] ??= []).push(d);
        if (s === 'order') firstSort = d;
      }
      host.push(t1 - t0);
      clone.push(t2 - t1);
      zod.push(t3 - t2);
      total.push(t3 - t0 + firstSort);
    }
    console.log(`  host: read summary.json + snapshot   ${stats(host)}`);
    console.log(`  snapshot JSON round trip (${(bytes / 2 ** 20).toFixed(2)} MiB)  ${stats(clone)}`);
    console.log(`  webview zod check                    ${stats(zod)}`);
    for (const [s, xs] of Object.entries(sorts)) console.log(`  matrix order "${s}"${' '.repeat(Math.max(0, 20 - s.length))}${stats(xs)}`);
    console.log(`  first paint's data (host → webview, results order)  ${stats(total)}  (target < 300 ms; browser layout/paint not included)`);
    const s0 = performance.now();
    const samples = readAllTargetSamples(dir, Array.from({ length: TARGETS }, (_, i) => (i === 0 ? 'base' : `arith-${String(10 * i).padStart(6, '0')}`)));
    console.log(`  apart: the targets' samples for the diffs (${samples.reduce((a, t) => a + t.records.length, 0)} records)  ${(performance.now() - s0).toFixed(1)} ms`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

void main();
