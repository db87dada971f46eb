// The W&B logger child process: one per run, forked by wandbTracker.ts (bundled as dist/wandbLogger.js,
// and out/src/core/tracking/wandbLogger.js for the unit tests). It runs @wandb/sdk where its
// process-wide signal/beforeExit handlers (which call process.exit()) and its global "current run"
// cannot hurt: this process holds one run, uses only the run object, and is started detached (its
// own process group), so a terminal's Ctrl-C reaches the CLI alone. Its environment holds only the
// WANDB_* variables (key included), never the Tinker key. It exits when the parent goes away.
import { wandb } from '@wandb/sdk';
import { errorMessage } from '../errors';
import { FromLogger, ToLogger, WandbInit } from './wandbMessages';

type Run = Awaited<ReturnType<typeof wandb.init>>;

let run: Run | undefined;
let pending: ToLogger[] = [];

function send(msg: FromLogger): void {
  if (process.connected) process.send?.(msg);
}

function fail(reason: string): void {
  send({ type: 'error', reason });
  // let the message go out, then end: the parent restarts a logger later
  setTimeout(() => process.exit(2), 50);
}

process.on('uncaughtException', (err) => fail(errorMessage(err)));
process.on('unhandledRejection', (err) => fail(errorMessage(err)));
process.on('disconnect', () => process.exit(0));
// the SDK's own SIGINT handler would exit mid-run; the parent decides when this process ends
process.on('SIGINT', () => undefined);

async function init(opts: WandbInit): Promise<void> {
  // group, tags and notes: @wandb/sdk 0.5.1 drops them from init; they travel in the config
  const extra = { ...(opts.group ? { wandb_group: opts.group } : {}), ...(opts.tags?.length ? { wandb_tags: opts.tags } : {}), ...(opts.notes ? { wandb_notes: opts.notes } : {}) };
  run = await wandb.init({
    project: opts.project,
    entity: opts.entity,
    name: opts.name,
    id: opts.id,
    resume: opts.resume ? 'allow' : undefined,
    tags: opts.tags,
    notes: opts.notes,
    config: { ...opts.config, ...extra },
    settings: { silent: true, baseUrl: process.env.WANDB_BASE_URL || 'https://api.wandb.ai', offline: process.env.WANDB_MODE === 'offline' },
  });
  send({ type: 'started', id: run.id, url: run.url() });
  const queued = pending;
  pending = [];
  for (const m of queued) await handle(m);
}

async function handle(msg: ToLogger): Promise<void> {
  if (msg.type === 'init') return init(msg.init);
  if (!run) {
    pending.push(msg);
    return;
  }
  if (msg.type === 'log') {
    run.log({ ...msg.row }, msg.step);
    send({ type: 'logged', seq: msg.seq });
    return;
  }
  if (msg.step !== undefined && Object.keys(msg.summary).length > 0) run.log({ ...msg.summary }, msg.step);
  await run.finish(0);
  send({ type: 'finished' });
  setTimeout(() => process.exit(0), 20);
}

process.on('message', (raw: unknown) => {
  const parsed = ToLogger.safeParse(raw);
  if (!parsed.success) return fail(`bad message from the run: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  handle(parsed.data).catch((err) => fail(errorMessage(err)));
});
