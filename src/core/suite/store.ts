// Reading a suite file (its version is its content's hash) and where each (suite version, checkpoint)
// result lives: `suites/<suite name>/<version>/<checkpoint key>/result.json` next to the suite file.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { formatIssue } from '../spec/issues';
import { parseJsonWithPosition, readSpecText, RunSpecError } from '../spec/text';
import { SUITE_EXTENSION, SuiteFileSchema, SuiteResult, type SuiteEntrySpec } from './contract';
import type { GateEntry } from './gate';

export const SUITE_RESULTS_DIR = 'suites';
export const SUITE_RESULT_FILE = 'result.json';
export const DEFAULT_NON_INFERIORITY = 0.02;

export interface LoadedSuiteEntry extends GateEntry {
  /** the eval spec file (absolute), or undefined for an inline spec */
  evalFile?: string;
  spec: SuiteEntrySpec;
}

export interface LoadedSuite {
  file: string;
  dir: string;
  name: string;
  /** 12 hex digits of the sha256 of the file's JSON value (key order and spacing do not count) */
  version: string;
  entries: LoadedSuiteEntry[];
}

/** JSON with object keys sorted, so the version follows the content and not its layout. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

export function suiteVersionOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex').slice(0, 12);
}

export function suiteNameOf(file: string): string {
  const base = path.basename(file);
  return (base.toLowerCase().endsWith(SUITE_EXTENSION) ? base.slice(0, -SUITE_EXTENSION.length) : base.replace(/\.json$/i, '')) || 'suite';
}

/** The entry name an eval spec gives when the entry names none. */
function entryDefaultName(e: SuiteEntrySpec, i: number): string {
  if (typeof e.eval === 'string') return path.basename(e.eval).replace(/\.eval\.json$/i, '').replace(/\.json$/i, '');
  const n = e.eval['name'];
  return typeof n === 'string' && n ? n : `entry-${i + 1}`;
}

const isNll = (e: SuiteEntrySpec) => typeof e.eval === 'object' && e.eval['nll'] !== undefined;

export function parseSuiteValue(value: unknown, file: string): LoadedSuite {
  const abs = path.resolve(file);
  const label = path.basename(abs);
  const r = SuiteFileSchema.safeParse(value, { reportInput: true });
  if (!r.success) throw new RunSpecError(r.error.issues.map((i) => `${label}: ${formatIssue(i, SuiteFileSchema)}`));
  const dir = path.dirname(abs);
  const entries = r.data.entries.map((e, i): LoadedSuiteEntry => {
    const nll = isNll(e) || e.metric === 'nll';
    const metric = e.metric ?? (nll ? 'nll' : 'pass@1');
    return {
      name: e.name ?? entryDefaultName(e, i),
      layer: e.layer,
      metric,
      goal: e.goal ?? (metric === 'nll' ? 'minimize' : 'maximize'),
      gate: e.gate ?? { non_inferiority: DEFAULT_NON_INFERIORITY },
      ...(typeof e.eval === 'string' ? { evalFile: path.resolve(dir, e.eval) } : {}),
      spec: e,
    };
  });
  const seen = new Set<string>();
  const dup = entries.map((e) => e.name).filter((n) => (seen.has(n) ? true : (seen.add(n), false)));
  if (dup.length) throw new RunSpecError([`${label}: entries: the name ${JSON.stringify(dup[0])} is used twice (give each entry its own "name")`]);
  return { file: abs, dir, name: r.data.name ?? suiteNameOf(abs), version: suiteVersionOf(value), entries };
}

/** Whether an eval file is an NLL eval (its `nll` field); false when it cannot be read (running it says why). */
async function evalFileIsNll(file: string): Promise<boolean> {
  try {
    const v: unknown = JSON.parse(await fs.readFile(file, 'utf8'));
    return typeof v === 'object' && v !== null && (v as Record<string, unknown>)['nll'] !== undefined;
  } catch {
    return false;
  }
}

export async function loadSuite(file: string): Promise<LoadedSuite> {
  const abs = path.resolve(file);
  const suite = parseSuiteValue(parseJsonWithPosition(await readSpecText(abs), path.basename(abs)), abs);
  // an entry naming an NLL eval file gets the NLL defaults, as an inline NLL eval does
  for (const e of suite.entries) {
    if (!e.evalFile || e.spec.metric !== undefined || !(await evalFileIsNll(e.evalFile))) continue;
    e.metric = 'nll';
    if (e.spec.goal === undefined) e.goal = 'minimize';
  }
  return suite;
}

/** A folder name for a checkpoint: readable, and unique by a hash of the full path. */
export function checkpointKey(checkpoint: string): string {
  const slug = checkpoint.replace(/^tinker:\/\//, '').replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '').slice(-48) || 'model';
  return `${slug}-${createHash('sha256').update(checkpoint).digest('hex').slice(0, 8)}`;
}

export function suiteResultDir(suite: Pick<LoadedSuite, 'dir' | 'name' | 'version'>, checkpoint: string): string {
  return path.join(suite.dir, SUITE_RESULTS_DIR, suite.name, suite.version, checkpointKey(checkpoint));
}

/** The stored result of (the suite's current version, checkpoint), or undefined when there is none. */
export async function readSuiteResult(suite: Pick<LoadedSuite, 'dir' | 'name' | 'version'>, checkpoint: string): Promise<SuiteResult | undefined> {
  const file = path.join(suiteResultDir(suite, checkpoint), SUITE_RESULT_FILE);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  const r = SuiteResult.safeParse(parseJsonWithPosition(text, file));
  if (!r.success) throw new RunSpecError(r.error.issues.map((i) => `${file}: ${formatIssue(i, SuiteResult)}`));
  return r.data;
}

export async function sha256File(file: string): Promise<{ sha256: string; lines: number }> {
  const buf = await fs.readFile(file);
  let lines = 0;
  for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) lines++;
  if (buf.length > 0 && buf[buf.length - 1] !== 10) lines++;
  return { sha256: createHash('sha256').update(buf).digest('hex'), lines };
}

/**
 * Why a result no longer stands for (suite, checkpoint): empty when it is current. Checks the suite
 * version, the checkpoint, completeness, the entries and every data file's hash (relative paths are
 * against the suite's folder).
 */
export async function resultStaleness(suite: LoadedSuite, checkpoint: string, result: SuiteResult | undefined): Promise<string[]> {
  if (!result) return [`no result of suite ${suite.name} (version ${suite.version}) for ${checkpoint}`];
  const why: string[] = [];
  if (result.suite.version !== suite.version) why.push(`the suite changed since the result (version ${result.suite.version} → ${suite.version})`);
  if (result.checkpoint.path !== checkpoint) why.push(`the result is of ${result.checkpoint.path}, not ${checkpoint}`);
  if (!result.complete) why.push('the suite run did not finish');
  for (const e of suite.entries) if (!result.entries.some((r) => r.name === e.name)) why.push(`${e.name}: no result`);
  for (const e of result.entries) {
    for (const d of e.data) {
      const abs = path.resolve(suite.dir, d.file);
      try {
        const now = await sha256File(abs);
        if (now.sha256 !== d.sha256) why.push(`${e.name}: ${d.file} changed since the result (sha256 ${d.sha256.slice(0, 12)}… → ${now.sha256.slice(0, 12)}…)`);
      } catch {
        why.push(`${e.name}: ${d.file} is gone`);
      }
    }
  }
  return why;
}
