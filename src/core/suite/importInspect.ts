// An Inspect log as one entry's result of a suite (the route for benchmarks we do not grade natively):
// the log is imported as that entry's eval results folder under (suite version, checkpoint), and the
// entry's metric joins that checkpoint's result.json, next to the entries the suite ran itself. The
// log file is the entry's data fingerprint, so a changed or removed log makes the result stale.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from '../fs/atomic';
import { importInspectLogs, readInspectLog } from '../evals/inspectImport';
import type { SuiteEntryResult, SuiteResult } from './contract';
import { metricOf, SuiteRunError } from './run';
import { canonicalJson, loadSuite, readSuiteResult, sha256File, SUITE_RESULT_FILE, suiteResultDir } from './store';

export interface ImportInspectIntoSuite {
  suiteFile: string;
  /** the suite entry the log stands for */
  entry: string;
  /** one Inspect log (`.eval` or JSON) of one model */
  file: string;
  /** the checkpoint the log evaluated (a tinker:// path or base model); default: the log's model */
  checkpoint?: string;
  /** `scorer` or `scorer/key` (default: the log's first scorer) */
  score?: string;
  correctThreshold?: number;
}

const posix = (p: string) => p.split(path.sep).join('/');

/** Imports the log as the entry's result for the checkpoint; returns the checkpoint's suite result as written. */
export async function importInspectIntoSuite(a: ImportInspectIntoSuite): Promise<SuiteResult> {
  const suite = await loadSuite(a.suiteFile);
  const entry = suite.entries.find((e) => e.name === a.entry);
  if (!entry) throw new SuiteRunError(`${path.basename(suite.file)} has no entry "${a.entry}" (its entries: ${suite.entries.map((e) => e.name).join(', ')})`);
  const log = readInspectLog(path.resolve(a.file));
  const checkpoint = a.checkpoint ?? log.header.eval.model.replace(/^openai\//, '');
  const dir = suiteResultDir(suite, checkpoint);
  const out = path.join(dir, entry.name);
  const summary = importInspectLogs({ files: [a.file], outDir: out, ...(a.score ? { score: a.score } : {}), ...(a.correctThreshold !== undefined ? { correctThreshold: a.correctThreshold } : {}) });
  const target = summary.targets[0]!;
  const m = metricOf(summary, target.id, entry.metric);
  if (!m) throw new SuiteRunError(`${entry.name}: the Inspect log gives no ${entry.metric} (it has reward and pass@1…pass@${summary.n})`);
  const fp = await sha256File(path.resolve(a.file));
  const result: SuiteEntryResult = {
    name: entry.name,
    layer: entry.layer,
    metric: entry.metric,
    goal: entry.goal,
    estimate: m.estimate,
    n: Object.keys(m.perItem).length,
    per_item: m.perItem,
    data: [{ file: posix(path.relative(suite.dir, path.resolve(a.file))), ...fp }],
    spec_sha256: createHash('sha256').update(canonicalJson({ inspect: { task: log.header.eval.task, score: a.score ?? null, correct_threshold: a.correctThreshold ?? 0.5 } })).digest('hex'),
    results_dir: entry.name,
  };
  const earlier = await readSuiteResult(suite, checkpoint);
  const now = new Date().toISOString();
  const kept = (earlier?.entries ?? []).filter((e) => e.name !== entry.name);
  // in the suite's order
  const order = new Map(suite.entries.map((e, i) => [e.name, i]));
  const entries = [...kept, result].sort((x, y) => (order.get(x.name) ?? 1e9) - (order.get(y.name) ?? 1e9));
  const written: SuiteResult = {
    kind: 'suite-result',
    version: 1,
    suite: { name: suite.name, version: suite.version, file: suite.file },
    checkpoint: earlier?.checkpoint ?? { label: target.label, path: checkpoint, model: target.model },
    entries,
    complete: suite.entries.every((e) => entries.some((r) => r.name === e.name)),
    created_at: earlier?.created_at ?? now,
    updated_at: now,
  };
  fs.mkdirSync(dir, { recursive: true });
  await writeFileAtomic(path.join(dir, SUITE_RESULT_FILE), JSON.stringify(written, null, 2) + '\n');
  return written;
}
