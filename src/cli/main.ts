// The headless CLI on the same core as the extension: `tinker-studio grpo|sft|dpo <spec>` (see USAGE).
// Backend "local" runs the embedded engine in this process (its compute in a worker thread, its data
// under the cache dir); "cloud" and "custom" take the API key from TINKER_API_KEY.
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { resolveBackend } from '../core/config/backend';
import { classifyKeyDestination, originOf } from '../core/config/keyOrigin';
import { Redactor } from '../core/config/redact';
import { wandbTrackerFactory } from '../core/tracking/wandbSetup';
import { ServiceClient } from '../core/tinker/client';
import { describeRoute } from '../core/tinker/proxy';
import { createComputeBackend } from '../engine/model';
import { startEngineServer } from '../engine/server';
import { tinkerStudioCacheDir } from '../engine/storeDir';
import { TrainingSession } from '../core/agent/session';
import { writeFileAtomic } from '../core/fs/atomic';
import { DistillDataArgs, EvalArgs, GrpoArgs, McpArgs, PairsArgs, SweepArgs, USAGE, UsageError, parseArgs } from './args';
import { distillData } from '../core/distill/distillData';
import { rankingTable, runSweep } from '../core/experiments/runSweep';
import { runEval } from '../core/evals/runEval';
import { benchmarkEvalSpec } from './benchmarkSpec';
import { everySampleFailed, formatEvalTable } from '../core/evals/table';
import { exportInspectLogs } from '../core/evals/inspectLog';
import { runCheckpoints } from './checkpoints';
import type { CheckpointsArgs } from './checkpointsArgs';
import { registryFileOf, runRegistry } from './registry';
import { registryConfigExtra } from '../core/models/metadata';
import type { RegistryArgs } from './registryArgs';
import { runExport } from './export';
import type { ExportArgs } from './exportArgs';
import { suiteRunner } from '../core/suite/run';
import { serveMcp } from './mcp';
import { Progress } from './progress';
import { runKindCommand } from './runKind';
import { suiteCommand } from './suite';
import type { SuiteArgs } from './suiteArgs';
import { errorMessage } from '../core/errors';
import { runUsage, usageBackend, type UsageArgs } from './usage';
import { printEstimate, pricesForEstimate } from './estimate';
import { formatUsd } from '../core/cost/prices';

const VERSION = '0.1.0';

interface Closer {
  close(): Promise<void>;
}

/**
 * Opens the backend the flags (or else the spec) name; `closers` collects what must be stopped after.
 * The embedded engine is started once and shared by every connection (an MCP session connects per call).
 */
function connector(args: Pick<GrpoArgs, 'backend' | 'baseUrl'>, cacheDir: string, closers: Closer[], log: (l: string) => void) {
  let engine: Promise<{ url: string; apiKey: string }> | undefined;
  const startEngine = async () => {
    const backend = await createComputeBackend({ inWorker: true, gemmThreads: 2 });
    closers.push(backend);
    const dataDir = path.join(cacheDir, 'engine');
    // the engine's per-launch token, a secret like the API key: redacted from everything printed
    const apiKey = `tml-local-${randomBytes(24).toString('hex')}`;
    redactor.add(apiKey);
    const server = await startEngineServer({ dataDir, backend, apiKey });
    closers.unshift(server);
    log(`embedded engine on ${server.url} (data ${dataDir})`);
    return { url: server.url, apiKey };
  };
  return async (spec: { backend: 'local' | 'cloud' | 'custom'; base_url?: string; project_id?: string }, o: { withoutSession?: boolean } = {}): Promise<ServiceClient> => {
    const kind = args.backend ?? spec.backend;
    const apiKey = process.env.TINKER_API_KEY?.trim() || undefined;
    // the spec's project, else TINKER_PROJECT_ID (the client reads it)
    const project = spec.project_id ? { projectId: spec.project_id } : {};
    if (kind === 'local') {
      const { url, apiKey: engineKey } = await (engine ??= startEngine());
      return ServiceClient.connect({ baseUrl: url, apiKey: engineKey, clientVersion: VERSION, ...project, ...o });
    }
    const resolved = resolveBackend(
      { backend: kind, cloudBaseUrl: kind === 'cloud' && args.baseUrl ? args.baseUrl : undefined, customBaseUrl: args.baseUrl ?? spec.base_url ?? '' },
      kind === 'cloud' && !args.baseUrl ? { TINKER_BASE_URL: process.env.TINKER_BASE_URL } : {},
    );
    if (resolved.kind === 'local') throw new Error('unreachable: local handled above');
    if (resolved.needsApiKey && !apiKey) throw new Error('the cloud backend needs an API key: set TINKER_API_KEY');
    const key = apiKey ? keyFor(resolved.baseUrl, args, log) : undefined;
    if (resolved.needsApiKey && !key) throw new Error(`the API key was not sent to ${resolved.baseUrl}: pass --base-url ${resolved.baseUrl} to confirm that server`);
    log(`connecting to ${resolved.baseUrl}`);
    const client = await ServiceClient.connect({ baseUrl: resolved.baseUrl, apiKey: key, clientVersion: VERSION, ...project, ...o });
    // HTTPS_PROXY / HTTP_PROXY / NO_PROXY come from the environment
    if (client.transport.route?.kind === 'proxy') log(`reaching ${resolved.baseUrl} ${describeRoute(client.transport.route)}`);
    return client;
  };
}

/**
 * The key goes to the official cloud, or to the origin the user named on the command line
 * (--base-url) or in TINKER_BASE_URL; a URL that only a spec or a resumed run's config.json names
 * gets no key.
 */
function keyFor(baseUrl: string, args: Pick<GrpoArgs, 'baseUrl'>, log: (l: string) => void): string | undefined {
  const confirmed = [args.baseUrl, process.env.TINKER_BASE_URL].flatMap((u) => (u ? [originOf(u) ?? ''] : []));
  const d = classifyKeyDestination(baseUrl, confirmed);
  if (d.kind === 'official' || d.kind === 'trusted') return process.env.TINKER_API_KEY?.trim() || undefined;
  log(`not sending the API key to ${d.origin}: ${d.kind === 'refused' ? d.reason : 'pass --base-url to confirm that server'}`);
  return undefined;
}

const redactor = new Redactor();
redactor.add(process.env.TINKER_API_KEY?.trim());
redactor.add(process.env.HF_TOKEN?.trim());
const redactSecrets = (text: string) => redactor.redact(text);

interface Interruptible {
  log: (line: string) => void;
  /** logged at the first Ctrl-C (or SIGTERM), which aborts the body's signal; a second exits at once (130) */
  cancelling: string;
  /** the error line when the body throws after an abort (exit 130); without it every throw is an error (exit 1) */
  cancelled?: string;
  /** a progress line may be open on stderr: the error line starts on a line of its own */
  newline?: boolean;
}

/**
 * A command's body under Ctrl-C: `signal` aborts at the first interrupt; a throw is one error line
 * (secrets redacted); the backends the body opened (`closers`) are closed and the handlers removed
 * however it ends.
 */
async function interruptible(o: Interruptible, body: (signal: AbortSignal, closers: Closer[]) => Promise<number>): Promise<number> {
  const ac = new AbortController();
  let interrupts = 0;
  const onSignal = () => {
    if (++interrupts > 1) process.exit(130);
    o.log(o.cancelling);
    ac.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const closers: Closer[] = [];
  try {
    return await body(ac.signal, closers);
  } catch (err) {
    const cancelled = o.cancelled !== undefined && ac.signal.aborted;
    process.stderr.write(`${o.newline ? '\n' : ''}tinker-studio: ${redactSecrets(cancelled ? o.cancelled! : errorMessage(err))}\n`);
    return cancelled ? 130 : 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    for (const c of closers) await c.close().catch(() => undefined);
  }
}

async function main(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`tinker-studio: ${err.message}\n\n${USAGE}\n`);
      return 2;
    }
    throw err;
  }
  if (args.command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (args.command === 'pairs') return pairs(args);
  const cacheDir = args.cacheDir !== undefined ? path.resolve(args.cacheDir) : tinkerStudioCacheDir();
  if (args.command === 'mcp') return mcp(args, cacheDir);
  if (args.command === 'checkpoints') return checkpoints(args, cacheDir);
  if (args.command === 'usage') return usage(args, cacheDir);
  if (args.command === 'registry') return registry(args, cacheDir);
  if (args.command === 'export') return exportCommand(args, cacheDir);
  if (args.command === 'sweep') return sweep(args, cacheDir);
  if (args.command === 'eval') return evaluate(args, cacheDir);
  if (args.command === 'suite') return suite(args, cacheDir);
  if (args.command === 'distill-data') return distill(args, cacheDir);
  const runsDir = path.resolve(args.runsDir ?? process.env.TINKER_STUDIO_RUNS_DIR ?? 'runs');
  const tty = Boolean(process.stderr.isTTY);
  const progress = new Progress({ write: (t) => process.stderr.write(t), isTTY: tty, columns: process.stderr.columns });
  const log = (line: string) => progress.log(redactSecrets(line));

  return interruptible({ log, cancelling: 'cancelling: finishing the step in flight and saving a resume point (Ctrl-C again to quit at once)' }, async (signal, closers) => {
    // a run warm-started from a registered model version: its checkpoints carry the version's name
    const registryExtra = args.spec && !args.resume ? await registryConfigExtra(registryFileOf({}), path.resolve(args.spec)) : undefined;
    const common = {
      ...(args.spec ? { specFile: path.resolve(args.spec) } : {}),
      ...(registryExtra ? { configExtra: registryExtra } : {}),
      ...(args.resume ? { resumeDir: path.resolve(args.resume) } : {}),
      runsDir,
      cacheDir,
      // the CLI's proxy is the environment's (HTTPS_PROXY, HTTP_PROXY, NO_PROXY)
      network: { env: process.env },
      connect: connector(args, cacheDir, closers, log),
      signal,
      onEvent: (e: Parameters<Progress['onEvent']>[0]) => progress.onEvent(e),
      log,
      // W&B: the spec's wandb_* fields, else WANDB_PROJECT / WANDB_ENTITY; the key from WANDB_API_KEY
      tracking: { tracker: wandbTrackerFactory({ env: process.env }) },
      ...(await pricesOption(args.prices ?? process.env.TINKER_STUDIO_PRICES)),
    };
    if (args.spec && !args.resume) {
      const prices = await pricesForEstimate(common.prices);
      await printEstimate(async () => (await import('../core/kinds/estimate')).estimateSpecFile(path.resolve(args.spec!), { cacheDir, prices }), log);
    }
    return runKindCommand(args.command, { ...common, ...(args.python ? { python: args.python } : {}) }, { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t), redact: redactSecrets });
  });
}

/** `--prices FILE` (or TINKER_STUDIO_PRICES): the table over the shipped one; none given, the run's recorded table or the shipped one. */
async function pricesOption(file: string | undefined): Promise<{ prices?: import('../core/cost/prices').PriceTable }> {
  if (!file) return {};
  const { pricesFromFile } = await import('../core/cost/priceSettings');
  return { prices: pricesFromFile(path.resolve(file)) };
}

/** `tinker-studio pairs`: a GRPO run's training samples → a pairs file. */
async function pairs(args: PairsArgs): Promise<number> {
  const { makePairsFromRun, pairsJsonl } = await import('../core/dpo/fromRun');
  const runDir = path.resolve(args.runDir);
  const made = await makePairsFromRun(runDir, args.threshold !== undefined ? { threshold: args.threshold } : {});
  for (const p of made.problems.slice(0, 5)) process.stderr.write(`skipped ${p}\n`);
  const out = path.resolve(args.out ?? path.join(runDir, 'pairs.jsonl'));
  await writeFileAtomic(out, pairsJsonl(made.pairs));
  process.stdout.write(`${made.pairs.length} pairs from ${made.groups} groups of ${made.iterations.length} iteration${made.iterations.length === 1 ? '' : 's'} (${made.belowThreshold} groups below the threshold ${args.threshold ?? 0.5}): ${out}\n`);
  return made.pairs.length > 0 ? 0 : 1;
}

/** `tinker-studio sweep`: runs (or resumes) a sweep and prints the ranking. */
async function sweep(args: SweepArgs, cacheDir: string): Promise<number> {
  const runsDir = path.resolve(args.runsDir ?? process.env.TINKER_STUDIO_RUNS_DIR ?? 'runs');
  const log = (line: string) => process.stderr.write(`${redactSecrets(line)}\n`);
  return interruptible({ log, cancelling: 'cancelling the sweep: each run saves a resume point (Ctrl-C again to quit at once); run the same command to resume' }, async (signal, closers) => {
    const given = await pricesOption(args.prices ?? process.env.TINKER_STUDIO_PRICES);
    const prices = await pricesForEstimate(given.prices);
    await printEstimate(async () => (await import('../core/experiments/sweepEstimate')).estimateSweep(args.file, { cacheDir, prices }), log);
    const r = await runSweep({
      ...given,
      sweepFile: args.file,
      runsDir,
      ...(args.maxConcurrent !== undefined ? { maxConcurrent: args.maxConcurrent } : {}),
      ...(args.backend ? { backend: args.backend } : {}),
      connect: connector(args, cacheDir, closers, log),
      cacheDir,
      network: { env: process.env },
      ...(args.python ? { python: args.python } : {}),
      tracking: { tracker: wandbTrackerFactory({ env: process.env }) },
      signal,
      log,
      onProgress: (p) => log(`sweep: ${p.done}/${p.total} done${p.running.length ? `, running ${p.running.join(', ')}` : ''}`),
    });
    process.stdout.write(`\n${rankingTable(r)}\n\n`);
    const stopped = r.outcomes.filter((x) => x.status === 'stopped early').length;
    const usd = r.usdSaved > 0 ? `, ${formatUsd(r.usdSaved)} saved (estimate)` : '';
    process.stdout.write(`early stopping: ${stopped} run${stopped === 1 ? '' : 's'} stopped, ${r.stepsSaved} steps saved (about ${(r.msSaved / 1000).toFixed(1)} s at this sweep's time per step${usd})\n`);
    if (r.budgetStop) process.stdout.write(`budget: ${r.budgetStop} (max_cost_usd / max_tokens_total in ${path.basename(args.file)}); run the same command to resume\n`);
    process.stdout.write(`sweep ${r.cancelled ? 'cancelled' : 'done'}: ${r.dir}${r.cancelled ? ' (run the same command to resume)' : ''}\n`);
    const failed = r.outcomes.filter((x) => x.status === 'failed');
    for (const f of failed) process.stderr.write(`error: ${f.name}: ${redactSecrets(f.error ?? 'failed')}\n`);
    return r.cancelled ? 130 : failed.length ? 1 : 0;
  });
}

/** `tinker-studio mcp`: one training session served over stdio until the client disconnects. */
async function mcp(args: McpArgs, cacheDir: string): Promise<number> {
  const workspace = path.resolve(args.workspace ?? '.');
  const runsDir = path.resolve(workspace, args.runsDir ?? process.env.TINKER_STUDIO_RUNS_DIR ?? 'runs');
  const log = (line: string) => process.stderr.write(`${redactSecrets(line)}\n`);
  const closers: Closer[] = [];
  const session = new TrainingSession({
    runsDir,
    cacheDir,
    baseDir: workspace,
    python: args.python,
    tracking: { tracker: wandbTrackerFactory({ env: process.env }) },
    connect: connector(args, cacheDir, closers, log),
    ...(args.busyWaitMs !== undefined ? { busyWaitMs: args.busyWaitMs } : {}),
    idleMs: (args.idleMinutes ?? 60) * 60_000,
    log,
  });
  // asked to stop: a resume point (bounded by a few seconds, failures logged), then exit
  let stopping = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (stopping) process.exit(130);
    stopping = true;
    log(`${sig}: saving a resume point and closing the session`);
    void session
      .close(`stopped by ${sig}`)
      .catch((err: unknown) => log(`closing the session: ${errorMessage(err)}`))
      .then(async () => {
        for (const c of closers) await c.close().catch(() => undefined);
        process.exit(130);
      });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await serveMcp(session, { version: VERSION, redact: redactSecrets });
    return 0;
  } finally {
    await session.close('the MCP server stopped');
    for (const c of closers) await c.close().catch(() => undefined);
  }
}

/** `tinker-studio eval <spec>`: runs or resumes the eval with progress on stderr; the table on stdout. */
async function evaluate(args: EvalArgs, cacheDir: string): Promise<number> {
  const tty = Boolean(process.stderr.isTTY);
  const log = (line: string) => process.stderr.write(`${redactSecrets(line)}\n`);
  let lastShown = 0;
  const o = { log, cancelling: 'cancelling: the samples graded so far are kept; re-run to resume', cancelled: 'cancelled; the graded samples are kept, re-run to resume', newline: true };
  return interruptible(o, async (signal, closers) => {
    const given = await pricesOption(args.prices ?? process.env.TINKER_STUDIO_PRICES);
    const prices = await pricesForEstimate(given.prices);
    const runsDirs = [path.resolve(args.runsDir ?? process.env.TINKER_STUDIO_RUNS_DIR ?? 'runs')];
    const bench = args.benchmark ? benchmarkEvalSpec(args.benchmark, { cwd: process.cwd(), ...(args.out !== undefined ? { out: args.out } : {}), ...(args.backend ? { backend: args.backend } : {}), ...(args.baseUrl ? { baseUrl: args.baseUrl } : {}) }) : undefined;
    if (!bench) await printEstimate(async () => (await import('../core/evals/estimate')).estimateEval(path.resolve(args.spec), { cacheDir, prices, runsDirs, ...(args.out !== undefined ? { out: path.resolve(args.out) } : {}) }), log);
    const summary = await runEval({
      prices,
      specFile: bench ? bench.loaded.file : path.resolve(args.spec),
      ...(bench ? { loaded: bench.loaded, out: bench.out } : args.out !== undefined ? { out: path.resolve(args.out) } : {}),
      network: { env: process.env },
      ...(process.env.HF_TOKEN ? { hfToken: process.env.HF_TOKEN } : {}),
      ...(args.backend ? { backend: args.backend } : {}),
      cacheDir,
      runsDirs,
      ...(args.python ? { python: args.python } : {}),
      connect: connector(args, cacheDir, closers, log),
      signal,
      log,
      onProgress: (p) => {
        const now = Date.now();
        if (p.done < p.total && now - lastShown < (tty ? 200 : 5000)) return;
        lastShown = now;
        const line = `${p.unit === 'chats' ? 'scored' : 'sampled'} ${p.done}/${p.total}${p.unit === 'chats' ? ' chats' : ''}${p.target ? ` (${p.target})` : ''}`;
        process.stderr.write(tty ? `\r${line}\x1b[K${p.done === p.total ? '\n' : ''}` : `${line}\n`);
      },
    });
    process.stdout.write(`\n${formatEvalTable(summary)}\n`);
    const out = bench ? bench.out : args.out !== undefined ? path.resolve(args.out) : path.join(path.dirname(path.resolve(args.spec)), 'evals', summary.name);
    process.stdout.write(`results: ${out}${summary.elapsed_s !== undefined ? ` (${summary.elapsed_s.toFixed(1)} s)` : ''}\n`);
    if (args.inspect) for (const f of exportInspectLogs(out)) process.stdout.write(`Inspect log: ${f}\n`);
    if (summary.budget_stop) process.stdout.write(`budget: ${summary.budget_stop} (max_cost_usd / max_tokens_total in ${path.basename(args.spec)}); run the same command to resume\n`);
    const nothing = everySampleFailed(summary);
    if (nothing) process.stderr.write(`tinker-studio: ${redactSecrets(nothing)}\n`);
    return nothing ? 1 : 0;
  });
}

/** `tinker-studio suite run|show|compare`: progress on stderr, the tables on stdout; Ctrl-C keeps what was graded. */
async function suite(args: SuiteArgs, cacheDir: string): Promise<number> {
  const tty = Boolean(process.stderr.isTTY);
  const log = (line: string) => process.stderr.write(`${tty ? '\r\x1b[K' : ''}${redactSecrets(line)}\n`);
  const o = { log, cancelling: 'cancelling: the samples graded so far are kept; run the same command to resume', cancelled: 'cancelled; the graded samples are kept, run the same command to resume', newline: true };
  return interruptible(o, (signal, closers) =>
    suiteCommand(args, { cacheDir, connect: connector(args, cacheDir, closers, log), signal, log, isTTY: tty, out: (t) => process.stdout.write(redactSecrets(t)), err: (t) => process.stderr.write(redactSecrets(t)) }),
  );
}

/** `tinker-studio distill-data`: samples a teacher on a prompt set into SFT chats (off-policy distillation). */
async function distill(args: DistillDataArgs, cacheDir: string): Promise<number> {
  const tty = Boolean(process.stderr.isTTY);
  const log = (line: string) => process.stderr.write(`${redactSecrets(line)}\n`);
  let lastShown = 0;
  const o = { log, cancelling: 'cancelling: nothing is written (Ctrl-C again to quit at once)', cancelled: 'cancelled; the output file was not written', newline: true };
  return interruptible(o, async (signal, closers) => {
    const connect = connector(args, cacheDir, closers, log);
    const r = await distillData({
      teacher: args.teacher,
      prompts: args.prompts,
      out: args.out,
      ...(args.n !== undefined ? { n: args.n } : {}),
      ...(args.reward !== undefined ? { reward: args.reward } : {}),
      ...(args.minReward !== undefined ? { minReward: args.minReward } : {}),
      ...(args.maxTokens !== undefined ? { maxTokens: args.maxTokens } : {}),
      ...(args.temperature !== undefined ? { temperature: args.temperature } : {}),
      ...(args.seed !== undefined ? { seed: args.seed } : {}),
      ...(args.renderer !== undefined ? { renderer: args.renderer } : {}),
      ...(args.model !== undefined ? { model: args.model } : {}),
      ...(args.promptField !== undefined ? { promptField: args.promptField } : {}),
      ...(args.python !== undefined ? { python: args.python } : {}),
      connect: () => connect({ backend: args.backend ?? 'local', ...(args.baseUrl ? { base_url: args.baseUrl } : {}) }),
      cacheDir,
      network: { env: process.env },
      signal,
      log,
      onProgress: (done, total) => {
        const now = Date.now();
        if (done < total && now - lastShown < (tty ? 200 : 5000)) return;
        lastShown = now;
        const line = `sampled ${done}/${total}`;
        process.stderr.write(tty ? `\r${line}\x1b[K${done === total ? '\n' : ''}` : `${line}\n`);
      },
    });
    process.stdout.write(`${r.kept} of ${r.sampled} samples kept (${r.prompts} prompts)${r.rewardErrors ? `, ${r.rewardErrors} reward errors` : ''}\nchats: ${r.out}\nprovenance: ${r.provenanceFile}\n`);
    return 0;
  });
}

/** `tinker-studio checkpoints …` on the backend the flags name (default: the local engine). */
async function checkpoints(args: CheckpointsArgs, cacheDir: string): Promise<number> {
  const log = (line: string) => process.stderr.write(`${redactSecrets(line)}\n`);
  return interruptible({ log, cancelling: 'cancelling (Ctrl-C again to quit at once)', cancelled: 'cancelled; nothing half-written was left behind' }, async (signal, closers) => {
    const client = await connector(args, cacheDir, closers, log)({ backend: args.backend ?? 'local', base_url: args.baseUrl });
    closers.unshift({ close: async () => client.close() });
    return await runCheckpoints(args, client, { out: (t) => process.stdout.write(redactSecrets(t)), err: (t) => process.stderr.write(redactSecrets(t)), signal });
  });
}

/** `tinker-studio usage <run dir>`: the run's tokens against the service's accounting; no session is opened. */
async function usage(args: UsageArgs, cacheDir: string): Promise<number> {
  const log = (line: string) => process.stderr.write(`${redactSecrets(line)}\n`);
  return interruptible({ log, cancelling: 'cancelling (Ctrl-C again to quit at once)', cancelled: 'cancelled' }, async (signal, closers) => {
    const client = await connector(args, cacheDir, closers, log)(await usageBackend(args), { withoutSession: true });
    closers.unshift({ close: async () => client.close() });
    return await runUsage(args, client, { out: (t) => process.stdout.write(redactSecrets(t)), signal });
  });
}

/** `tinker-studio export adapter|merge …`; a tinker:// checkpoint is downloaded from the backend the flags name. */
async function exportCommand(args: ExportArgs, cacheDir: string): Promise<number> {
  const log = (line: string) => process.stderr.write(`${redactSecrets(line)}\n`);
  return interruptible({ log, cancelling: 'cancelling (Ctrl-C again to quit at once)', cancelled: 'cancelled; nothing half-written was left behind' }, async (signal, closers) => {
    const connect = async () => {
      const client = await connector(args, cacheDir, closers, log)({ backend: args.backend ?? 'local', base_url: args.baseUrl });
      closers.unshift({ close: async () => client.close() });
      return client;
    };
    return runExport(args, { out: (t) => process.stdout.write(redactSecrets(t)), err: (t) => process.stderr.write(redactSecrets(t)), connect, signal });
  });
}

/** `tinker-studio registry …`; a suite the gate needs runs on the backend the flags name (default: local). */
async function registry(args: RegistryArgs, cacheDir: string): Promise<number> {
  const log = (line: string) => process.stderr.write(`${redactSecrets(line)}\n`);
  return interruptible({ log, cancelling: 'cancelling (Ctrl-C again to quit at once)', cancelled: 'cancelled; the suite entries finished are kept, and the registry is unchanged' }, async (signal, closers) => {
    const runsDirs = [path.resolve(args.runsDir ?? process.env.TINKER_STUDIO_RUNS_DIR ?? 'runs')];
    const runner = () => suiteRunner({ connect: connector(args, cacheDir, closers, log), cacheDir, ...(args.backend ? { backend: args.backend } : {}), ...(args.python ? { python: args.python } : {}), runsDirs, log });
    const connect = async () => {
      const client = await connector(args, cacheDir, closers, log)({ backend: args.backend ?? 'local', base_url: args.baseUrl });
      closers.unshift({ close: async () => client.close() });
      return client;
    };
    return runRegistry(args, { out: (t) => process.stdout.write(redactSecrets(t)), err: (t) => process.stderr.write(redactSecrets(t)), runner, connect, signal });
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`tinker-studio: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
