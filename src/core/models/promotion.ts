// The promotion gate: a version enters production only when the registry's gate suite has a current,
// complete result for it and for the production version, and every entry's gate passes (suite/gate.ts,
// paired on the same items). Otherwise it is refused with every reason and number in one message,
// unless promoted anyway with a written reason, which the history keeps.
import * as path from 'node:path';
import type { SuiteResult, SuiteRunner } from '../suite/contract';
import { suiteVerdicts, type EntryVerdict } from '../suite/gate';
import { loadSuite, readSuiteResult, resultStaleness, type LoadedSuite } from '../suite/store';
import { RegistryError, requireVersion } from './lifecycle';
import { productionOf, type Actor, type ModelVersion, type Registry, type SuiteSnapshot } from './registry';
import { currentActor, readRegistry, updateRegistry } from './store';

export interface PromotionCheck {
  candidate: ModelVersion;
  production?: ModelVersion;
  suite?: { name: string; version: string; file: string };
  verdicts: EntryVerdict[];
  /** every reason the gate refuses, each with its numbers; empty: the gate passes */
  refusals: string[];
  /** the checks that passed, one line each */
  passes: string[];
  /** the suite results read (for the registry's snapshots) */
  results: { candidate?: SuiteResult; production?: SuiteResult };
}

export interface GateOptions {
  /** the suite file (default: the registry's gate_suite) */
  suiteFile?: string;
  /** runs the suite where a result is missing or stale (the CLI's --run-suite); without it such a result refuses */
  runSuite?: SuiteRunner;
  signal?: AbortSignal;
  onProgress?: (line: string) => void;
  /** the paired bootstrap's settings (tests) */
  resamples?: number;
  seed?: number;
}

export class PromotionRefusedError extends RegistryError {
  constructor(readonly check: PromotionCheck) {
    super(refusalMessage(check));
    this.name = 'PromotionRefusedError';
  }
}

export function refusalMessage(c: PromotionCheck): string {
  const against = c.production ? ` against production ${c.production.id}` : ' (no production version yet)';
  const suite = c.suite ? ` on suite ${c.suite.name} version ${c.suite.version}` : '';
  return [`promotion of ${c.candidate.id} to production refused${suite}${against}:`, ...c.refusals.map((r) => `  - ${r}`), ...(c.passes.length ? ['passed:', ...c.passes.map((p) => `  - ${p}`)] : []), `To promote it anyway, give a written reason (--anyway "<reason>").`].join('\n');
}

/** The suite that gates promotions: the one given, else the registry's. */
export async function gateSuiteOf(file: string, reg: Registry, suiteFile?: string): Promise<LoadedSuite | undefined> {
  const f = suiteFile ? path.resolve(suiteFile) : reg.gate_suite ? path.resolve(path.dirname(path.resolve(file)), reg.gate_suite) : undefined;
  return f ? loadSuite(f) : undefined;
}

/** A suite result as the registry keeps it on the version (figures only, no per-item values). */
export function snapshotOf(r: SuiteResult, registryDir: string): SuiteSnapshot {
  return {
    suite: { name: r.suite.name, version: r.suite.version, file: path.isAbsolute(r.suite.file) ? path.relative(registryDir, r.suite.file) : r.suite.file },
    checkpoint: r.checkpoint.path,
    complete: r.complete,
    at: r.updated_at,
    entries: r.entries.map((e) => ({ name: e.name, layer: e.layer, metric: e.metric, goal: e.goal, estimate: e.estimate, n: e.n })),
  };
}

/** Puts `snap` on the version, replacing an earlier result of the same suite version. */
export function keepSnapshot(v: ModelVersion, snap: SuiteSnapshot): void {
  v.suite_results = [...v.suite_results.filter((s) => !(s.suite.name === snap.suite.name && s.suite.version === snap.suite.version)), snap];
}

/** The current result of (suite, version), running the suite when allowed and it is missing or stale; plus why it still does not stand. */
async function currentResult(suite: LoadedSuite, v: ModelVersion, role: string, o: GateOptions): Promise<{ result?: SuiteResult; why: string[] }> {
  const ckpt = v.sampler_path;
  if (!ckpt) return { why: [`${role} ${v.id} has no sampler path to evaluate (register it with its sampler weights)`] };
  let result = await readSuiteResult(suite, ckpt);
  let why = await resultStaleness(suite, ckpt, result);
  if (why.length && o.runSuite) {
    o.onProgress?.(`running suite ${suite.name} on ${role} ${v.id} (${why[0]})`);
    result = await o.runSuite({ suiteFile: suite.file, checkpoint: ckpt, signal: o.signal, onProgress: (d, t, what) => o.onProgress?.(`  ${role} ${v.id}: ${d}/${t} ${what}`) });
    why = await resultStaleness(suite, ckpt, result);
  }
  return { ...(result ? { result } : {}), why: why.map((w) => `${role} ${v.id}: ${w}`) };
}

/** Checks the gate for promoting `id` to production, without changing anything. */
export async function checkPromotion(file: string, id: string, o: GateOptions = {}): Promise<PromotionCheck> {
  const reg = await readRegistry(file);
  const candidate = requireVersion(reg, id);
  const production = productionOf(reg, candidate.name);
  const check: PromotionCheck = { candidate, ...(production ? { production } : {}), verdicts: [], refusals: [], passes: [], results: {} };
  if (production?.id === candidate.id) {
    check.refusals.push(`${candidate.id} is already in production`);
    return check;
  }
  if (candidate.status === 'retired') check.passes.push(`${candidate.id} comes back from retired`);
  const suite = await gateSuiteOf(file, reg, o.suiteFile);
  if (!suite) {
    check.refusals.push(`the registry names no gate suite: set one (tinker-studio registry gate <file.suite.json>) or pass --suite`);
    return check;
  }
  check.suite = { name: suite.name, version: suite.version, file: path.relative(path.dirname(path.resolve(file)), suite.file) };
  const cand = await currentResult(suite, candidate, 'candidate', o);
  check.refusals.push(...cand.why);
  if (cand.result) check.results.candidate = cand.result;
  let prodCurrent: SuiteResult | undefined;
  if (production) {
    const prod = await currentResult(suite, production, 'production', o);
    check.refusals.push(...prod.why);
    if (prod.result) check.results.production = prod.result;
    if (prod.why.length === 0) prodCurrent = prod.result;
  }
  // a stale result's numbers do not count: the verdicts use only current ones
  const candCurrent = cand.why.length === 0 ? cand.result : undefined;
  if (candCurrent && (!production || prodCurrent)) {
    const v = suiteVerdicts(suite.entries, candCurrent, prodCurrent, { resamples: o.resamples, seed: o.seed });
    check.verdicts = v.entries;
    for (const e of v.entries) for (const c of e.checks) (c.passed ? check.passes : check.refusals).push(c.reason);
  }
  return check;
}

export interface PromoteOptions extends GateOptions {
  /** "Promote Anyway": the written reason to promote past a refusing gate */
  anyway?: string;
  /** a note kept in the history of a passing promotion */
  reason?: string;
  by?: Actor;
}

export interface PromoteOutcome {
  version: ModelVersion;
  check: PromotionCheck;
  /** the version that left production for it */
  replaced?: ModelVersion;
}

/**
 * Promotes `id` to production through the gate (or anyway, with a reason); the production version it
 * replaces is retired. Throws PromotionRefusedError with every reason when the gate refuses.
 */
export async function promote(file: string, id: string, o: PromoteOptions = {}): Promise<PromoteOutcome> {
  const anyway = o.anyway?.trim();
  if (o.anyway !== undefined && !anyway) throw new RegistryError('promoting anyway needs a written reason (--anyway "<why this model ships despite the gate>")');
  const check = await checkPromotion(file, id, o);
  if (check.production?.id === check.candidate.id) throw new RegistryError(`${check.candidate.id} is already in production`);
  if (check.refusals.length && !anyway) throw new PromotionRefusedError(check);
  const registryDir = path.dirname(path.resolve(file));
  const by = o.by ?? currentActor(registryDir);
  return updateRegistry(file, (reg) => {
    const v = requireVersion(reg, check.candidate.id);
    const prod = productionOf(reg, v.name);
    // the gate compared with the production version of the check; another may have been promoted since
    if ((prod?.id ?? '') !== (check.production?.id ?? '')) throw new RegistryError(`production of ${v.name} changed to ${prod?.id ?? 'none'} while the gate ran; promote again`);
    if (check.results.candidate) keepSnapshot(v, snapshotOf(check.results.candidate, registryDir));
    const at = new Date().toISOString();
    if (prod) {
      if (check.results.production) keepSnapshot(prod, snapshotOf(check.results.production, registryDir));
      prod.status = 'retired';
      prod.history.push({ status: 'retired', at, by, reason: `replaced in production by ${v.id}` });
    }
    v.status = 'production';
    v.history.push(
      anyway && check.refusals.length
        ? { status: 'production', at, by, reason: anyway, anyway: true, gate: check.refusals }
        : { status: 'production', at, by, ...(o.reason?.trim() ? { reason: o.reason.trim() } : {}), gate: check.passes },
    );
    return { version: v, check, ...(prod ? { replaced: prod } : {}) };
  });
}

/** Reads (and, with a runner, makes) the gate suite's result for a version and keeps its figures on it. */
export async function recordSuiteResult(file: string, id: string, o: GateOptions = {}): Promise<{ version: ModelVersion; stale: string[] }> {
  const reg = await readRegistry(file);
  const v0 = requireVersion(reg, id);
  const suite = await gateSuiteOf(file, reg, o.suiteFile);
  if (!suite) throw new RegistryError('the registry names no gate suite: set one (tinker-studio registry gate <file.suite.json>) or pass --suite');
  const r = await currentResult(suite, v0, 'version', o);
  if (!r.result) throw new RegistryError(r.why.join('; '));
  const registryDir = path.dirname(path.resolve(file));
  const version = await updateRegistry(file, (reg2) => {
    const v = requireVersion(reg2, v0.id);
    keepSnapshot(v, snapshotOf(r.result!, registryDir));
    return v;
  });
  return { version, stale: r.why };
}
