// A run's experiment tracker (W&B): chosen by the host's factory from the spec's wandb_* fields, given
// an id chosen here and written into config.json before anything is sent (`wandb.id`; a resumed run
// reads it back and continues the same W&B run), fed every metrics row as it is written (RunWriter),
// and finished with a summary when the run closes. The run's URL is added to config.json
// (`wandb.url`) when W&B answers: the Runs view, the metrics panel and the comparison read it there.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { METRIC } from '../../protocol/metricKeys';
import type { TrackerEvents } from '../tracking/tracker';
import type { TrackerFactory } from '../tracking/wandbSetup';
import type { WandbFields } from '../tracking/wandbTracker';
import { readMetricsRowsSync } from './runDirectory';
import type { RunWriter } from './runWriter';
import { writeFileAtomicSync } from '../fs/atomic';

export interface RunTrackingOptions {
  tracker?: TrackerFactory;
  /** the host's warning (a notification, stderr) */
  onWarning?(message: string): void;
}

/** Environment facts logged with the spec as the W&B config. */
export interface RunFacts {
  model: string;
  renderer: string;
  backend: string;
  lora_rank: number;
  /** the run's kind: the kinds table's id */
  kind: string;
  [key: string]: unknown;
}

const WANDB_KEYS = ['wandb_project', 'wandb_name', 'wandb_entity', 'wandb_group', 'wandb_tags', 'wandb_notes'] as const;

export function wandbFieldsOf(spec: object): WandbFields {
  const s = spec as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of WANDB_KEYS) if (s[k] !== undefined) out[k] = s[k];
  return out as WandbFields;
}

function readRawConfig(dir: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
}

function updateWandbConfig(dir: string, patch: Record<string, unknown>): void {
  const config = readRawConfig(dir);
  const prev = typeof config.wandb === 'object' && config.wandb !== null ? (config.wandb as Record<string, unknown>) : {};
  config.wandb = { ...prev, ...patch };
  writeFileAtomicSync(path.join(dir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
}

/** Starts the run's tracker, if the factory gives one; the returned finish() is for the run's close. */
export function trackRun(
  o: RunTrackingOptions | undefined,
  writer: RunWriter,
  spec: object,
  facts: RunFacts,
  log: (line: string) => void,
): { finish(): Promise<void> } | undefined {
  if (!o?.tracker) return undefined;
  const fields = wandbFieldsOf(spec);
  const events: TrackerEvents = {
    log,
    onWarning: (m) => o.onWarning?.(m),
    onUrl: (url) => {
      try {
        updateWandbConfig(writer.dir, { url });
      } catch {
        // a run directory that went away: the URL is in the log line below anyway
      }
      log(`W&B run: ${url}`);
    },
  };
  const tracker = o.tracker({ wandb_name: path.basename(writer.dir), ...fields }, events);
  if (!tracker) return undefined;
  const raw = readRawConfig(writer.dir);
  const previous = raw.wandb as { id?: unknown } | undefined;
  const known = typeof previous?.id === 'string' ? previous.id : undefined;
  const id = known ?? randomBytes(6).toString('hex');
  if (!known) updateWandbConfig(writer.dir, { id, ...fields });
  tracker.start({ id, resume: known !== undefined, config: { ...spec, ...facts, ...(raw.sweep !== undefined ? { sweep: raw.sweep } : {}), run_dir: writer.dir } });
  writer.attachTracker(tracker);
  return {
    finish: async () => {
      writer.attachTracker(undefined);
      const report = await tracker.finish(runSummary(writer));
      log(report.line);
    },
  };
}

/** The end-of-run summary: final/best reward (GRPO) or NLL (SFT), the best holdout and its step, the final sampler path. */
export function runSummary(writer: RunWriter): Record<string, unknown> {
  const rows = readMetricsRowsSync(writer.dir);
  const out: Record<string, unknown> = {};
  const series = (key: string) => rows.filter((r) => typeof (r as Record<string, unknown>)[key] === 'number').map((r) => ({ step: r.step, v: (r as Record<string, unknown>)[key] as number }));
  const best = (key: string, goal: 'max' | 'min') => series(key).reduce<{ step: number; v: number } | undefined>((b, x) => (b === undefined || (goal === 'max' ? x.v > b.v : x.v < b.v) ? x : b), undefined);
  const reward = series(METRIC.reward);
  if (reward.length) {
    out['summary/final_reward'] = reward[reward.length - 1].v;
    out['summary/best_reward'] = best(METRIC.reward, 'max')?.v;
  }
  const nll = series(METRIC.trainNll);
  if (nll.length) {
    out['summary/final_nll'] = nll[nll.length - 1].v;
    out['summary/best_nll'] = best(METRIC.trainNll, 'min')?.v;
  }
  const holdout = best(METRIC.testReward, 'max');
  const testNll = best(METRIC.testNll, 'min');
  if (holdout) Object.assign(out, { 'summary/best_holdout_reward': holdout.v, 'summary/best_holdout_step': holdout.step });
  if (testNll) Object.assign(out, { 'summary/best_holdout_nll': testNll.v, 'summary/best_holdout_step': testNll.step });
  const sampler = [...writer.readCheckpoints()].reverse().find((c) => typeof c.sampler_path === 'string')?.sampler_path;
  if (sampler) out['summary/final_sampler_path'] = sampler;
  return out;
}
