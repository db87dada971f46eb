// Whether and how a run logs to W&B: the spec's wandb_* fields first, else the host's defaults (the
// tinker.wandb.project setting in the extension; WANDB_PROJECT / WANDB_ENTITY for the CLI and the MCP
// server). WANDB_MODE=disabled turns it off; offline is not supported by @wandb/sdk 0.5.1 (it still
// calls the server), so it turns logging off with a message saying so.
import type { Tracker, TrackerEvents } from './tracker';
import { WandbTracker, type WandbFields, type WandbTrackerOptions } from './wandbTracker';

export interface WandbSetup {
  /** the tinker.wandb.project setting (extension) */
  project?: string;
  /** SecretStorage's key, else WANDB_API_KEY */
  apiKey?: string;
  /** the tinker.wandb.baseUrl setting, else WANDB_BASE_URL */
  baseUrl?: string;
  env: NodeJS.ProcessEnv;
  /** the host's one warning (a notification in the extension, stderr in the CLI) */
  onWarning?(message: string): void;
  /** the tracker's bounds and logger script (tests shorten the 30 s finish) */
  tuning?: Partial<Pick<WandbTrackerOptions, 'finishTimeoutMs' | 'answerTimeoutMs' | 'retryDelayMs' | 'bufferLimit' | 'loggerScript'>>;
}

/** A tracker for a run with these spec fields, or undefined (with the reason logged when it was asked for). */
export type TrackerFactory = (fields: WandbFields, events: TrackerEvents) => Tracker | undefined;

export const WANDB_KEY_HINT = 'run "Tinker: Set W&B API Key" or set WANDB_API_KEY';

export function wandbTrackerFactory(setup: WandbSetup): TrackerFactory {
  return (fields, events) => {
    const env = setup.env;
    const project = fields.wandb_project ?? setup.project ?? nonEmpty(env.WANDB_PROJECT);
    if (!project) return undefined;
    const mode = (env.WANDB_MODE ?? '').toLowerCase();
    if (mode === 'disabled' || mode === 'dryrun') {
      events.log?.(`W&B: WANDB_MODE=${env.WANDB_MODE}: not logging to W&B`);
      return undefined;
    }
    const warn = (m: string) => {
      events.log?.(m);
      events.onWarning?.(m);
      setup.onWarning?.(m);
    };
    if (mode === 'offline') {
      warn('W&B: WANDB_MODE=offline is not supported by the JavaScript W&B client Tinker Studio uses; this run is not logged to W&B (metrics.jsonl has every row). Unset WANDB_MODE to log online.');
      return undefined;
    }
    const apiKey = setup.apiKey ?? nonEmpty(env.WANDB_API_KEY);
    if (!apiKey) {
      warn(`W&B: no API key, so this run is not logged to project "${project}": ${WANDB_KEY_HINT}.`);
      return undefined;
    }
    return new WandbTracker({
      fields: { ...fields, wandb_project: project, wandb_entity: fields.wandb_entity ?? nonEmpty(env.WANDB_ENTITY) },
      apiKey,
      baseUrl: setup.baseUrl ?? nonEmpty(env.WANDB_BASE_URL),
      env,
      events: { ...events, onWarning: (m) => (events.onWarning?.(m), setup.onWarning?.(m)) },
      ...setup.tuning,
    });
  };
}

function nonEmpty(s: string | undefined): string | undefined {
  return s && s.trim() ? s.trim() : undefined;
}
