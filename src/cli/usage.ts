// `tinker-studio usage <run dir>`: the run's own token counts against the service's accounting of
// its sessions (core/runs/usageReconcile.ts). The server is the run's own (its config.json's backend
// and base URL) unless --backend / --base-url name another; the call opens no session.
import * as path from 'node:path';
import { readRunConfig } from '../core/runs/runConfig';
import { readRunSessions } from '../core/runs/runSessions';
import { reconcileRunUsage, reconciliationText, type BillingReader, type Reconciliation } from '../core/runs/usageReconcile';
import { usageTokens } from '../core/tinker/usage';
import { BACKEND_OPTIONS, UsageError, backendArgs, readOptions, type BackendKind } from './options';

export interface UsageArgs {
  command: 'usage';
  runDir: string;
  backend?: BackendKind;
  baseUrl?: string;
  cacheDir?: string;
  json?: boolean;
}

export const USAGE_USAGE = '       tinker-studio usage <run dir> [--json] [--backend cloud|custom] [--base-url URL]';

export const USAGE_HELP = `"usage" sets a finished run's own token counts (its usage/* metrics) beside the service's accounting of
its sessions (the billing route: hours late, billing access only, windows of at most 14 days) per category.`;

const OPTIONS = { backend: BACKEND_OPTIONS.backend, 'base-url': BACKEND_OPTIONS['base-url'], 'cache-dir': BACKEND_OPTIONS['cache-dir'], json: { type: 'boolean' } } as const;

export function parseUsageArgs(rest: readonly string[]): UsageArgs {
  const { values: v, positionals, flags } = readOptions(OPTIONS, rest);
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'give a run directory' : `one run directory only (got "${positionals[0]}" and "${positionals[1]}")`);
  return { command: 'usage', runDir: positionals[0]!, ...backendArgs(v), ...(flags.has('json') ? { json: true } : {}) };
}

/** The backend to ask: the flags, else the run's config.json. */
export async function usageBackend(a: UsageArgs): Promise<{ backend: BackendKind; base_url?: string }> {
  const config = await readRunConfig(path.resolve(a.runDir));
  if (!config) throw new Error(`${path.resolve(a.runDir)} is not a run directory (no config.json)`);
  const backend = a.backend ?? config.backend ?? 'local';
  // the spec's URL, else the server the run's last session was made on
  const base = a.baseUrl ?? config.base_url ?? (await readRunSessions(path.resolve(a.runDir))).sessions.filter((x) => x.base_url).at(-1)?.base_url;
  return { backend, ...(base ? { base_url: base } : {}) };
}

export function reconciliationJson(r: Reconciliation): unknown {
  if (!r.ok) return { run: r.run, available: false, reason: r.reason, message: r.message, ...(r.own ? { own: { ...r.own, total: usageTokens(r.own) } } : {}) };
  return {
    run: r.run,
    available: true,
    sessions: r.sessions.map((s) => s.session_id),
    window: { starting_on: r.window.startingOn.toISOString(), ending_before: r.window.endingBefore.toISOString() },
    own: { ...r.own, total: usageTokens(r.own) },
    service: { ...r.service, total: usageTokens(r.service) },
    events: r.events,
    notes: r.notes,
  };
}

/** Runs the reconciliation and prints it; exit 0 when it could be read, 3 when the service's usage is not available (yet). */
export async function runUsage(a: UsageArgs, client: BillingReader, io: { out: (t: string) => void; signal?: AbortSignal }): Promise<number> {
  const r = await reconcileRunUsage(path.resolve(a.runDir), client, { ...(io.signal ? { signal: io.signal } : {}) });
  io.out(a.json ? `${JSON.stringify(reconciliationJson(r), null, 2)}\n` : reconciliationText(r));
  return r.ok ? 0 : 3;
}
