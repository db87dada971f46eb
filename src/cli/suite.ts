// `tinker-studio suite run|show|compare`: the suite runner with progress on stderr and the tables on
// stdout. The body gets the backend connector and the abort signal from main.ts's interruptible.
import * as path from 'node:path';
import type { RunEvalOptions } from '../core/evals/runEval';
import { resolveSuiteCheckpoint } from '../core/suite/checkpoint';
import { compareSuiteResults, formatSuiteComparison, formatSuiteResult } from '../core/suite/compare';
import type { SuiteResult } from '../core/suite/contract';
import { runSuite } from '../core/suite/run';
import { loadSuite, readSuiteResult, resultStaleness, type LoadedSuite } from '../core/suite/store';
import type { SuiteArgs } from './suiteArgs';

export interface SuiteCommandIo {
  cacheDir: string;
  connect: RunEvalOptions['connect'];
  signal: AbortSignal;
  log: (line: string) => void;
  out: (text: string) => void;
  err: (text: string) => void;
  isTTY: boolean;
}

/** The stored result of (suite, checkpoint), or an error that says how to make it. */
async function storedResult(suite: LoadedSuite, given: string, runsDirs: readonly string[], suiteArg: string): Promise<SuiteResult> {
  const ck = await resolveSuiteCheckpoint(given, { runsDirs });
  const r = await readSuiteResult(suite, ck.path);
  if (!r) throw new Error(`no result of suite ${suite.name} (version ${suite.version}) on ${ck.label}: run \`tinker-studio suite run ${suiteArg} ${given}\` first`);
  return r;
}

export async function suiteCommand(args: SuiteArgs, io: SuiteCommandIo): Promise<number> {
  const runsDirs = [path.resolve(args.runsDir ?? process.env.TINKER_STUDIO_RUNS_DIR ?? 'runs')];
  const suite = await loadSuite(path.resolve(args.suite));
  if (args.action === 'run') {
    let lastShown = 0;
    const r = await runSuite(
      { suiteFile: suite.file, checkpoint: args.checkpoints[0]!, signal: io.signal, onProgress: (done, total, what) => {
        const now = Date.now();
        if (done < total && now - lastShown < (io.isTTY ? 200 : 5000)) return;
        lastShown = now;
        const line = `${what}: ${done}/${total}`;
        io.err(io.isTTY ? `\r${line}\x1b[K${done === total ? '\n' : ''}` : `${line}\n`);
      } },
      { connect: io.connect, cacheDir: io.cacheDir, runsDirs, log: io.log, ...(args.backend ? { backend: args.backend } : {}), ...(args.python ? { python: args.python } : {}) },
    );
    io.out(`\n${formatSuiteResult(r)}\n`);
    if (!r.complete) {
      io.err(`${io.isTTY ? '\n' : ''}tinker-studio: cancelled; the samples graded so far are kept, run the same command to resume\n`);
      return 130;
    }
    return 0;
  }
  if (args.action === 'show') {
    const r = await storedResult(suite, args.checkpoints[0]!, runsDirs, args.suite);
    if (args.json) io.out(`${JSON.stringify(r, null, 2)}\n`);
    else io.out(`${formatSuiteResult(r)}\n`);
    for (const why of await resultStaleness(suite, r.checkpoint.path, r)) io.err(`stale: ${why}\n`);
    return 0;
  }
  const [a, b] = [await storedResult(suite, args.checkpoints[0]!, runsDirs, args.suite), await storedResult(suite, args.checkpoints[1]!, runsDirs, args.suite)];
  const c = compareSuiteResults(suite.entries, a, b);
  io.out(args.json ? `${JSON.stringify(c, null, 2)}\n` : `${formatSuiteComparison(c)}\n`);
  for (const r of [a, b]) for (const why of await resultStaleness(suite, r.checkpoint.path, r)) io.err(`stale (${r.checkpoint.label}): ${why}\n`);
  return 0;
}
