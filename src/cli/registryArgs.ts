// Arguments of `tinker-studio registry <action> …` (the model registry), with errors that say what to type.
import { BACKEND_OPTIONS, UsageError, backendArgs, readOptions, type BackendKind } from './options';

export type RegistryAction = 'list' | 'show' | 'register' | 'promote' | 'retire' | 'export-md' | 'gate' | 'suite';

export interface RegistryArgs {
  command: 'registry';
  action: RegistryAction;
  /** the registry file (default ./tinker-models.json, or $TINKER_STUDIO_REGISTRY) */
  registry?: string;
  /** show/promote/retire/suite: the version (name@vN, or a name for its newest); register: the model name */
  target?: string;
  /** register: a run folder */
  runDir?: string;
  checkpoint?: string;
  samplerPath?: string;
  statePath?: string;
  baseModel?: string;
  renderer?: string;
  loraRank?: number;
  description?: string;
  /** promote: staging or production (default production) */
  to?: 'staging' | 'production';
  anyway?: string;
  reason?: string;
  runSuite?: boolean;
  /** gate: the suite file to gate with; promote/suite: a suite other than the registry's */
  suite?: string;
  out?: string;
  json?: boolean;
  backend?: BackendKind;
  baseUrl?: string;
  cacheDir?: string;
  runsDir?: string;
  python?: string;
}

export const REGISTRY_USAGE = `       tinker-studio registry list [--json]
       tinker-studio registry show <name@vN | name> [--json]
       tinker-studio registry register <name> <run dir> [--checkpoint NAME] [--description TEXT]
       tinker-studio registry register <name> --sampler-path <tinker://…> [--state-path <tinker://…>] --base-model M
                    [--renderer R] [--lora-rank N] [--description TEXT]
       tinker-studio registry gate [<file.suite.json>]
       tinker-studio registry suite <name@vN> [--suite FILE] [options]
       tinker-studio registry promote <name@vN> [--to staging|production] [--run-suite] [--suite FILE]
                    [--reason TEXT] [--anyway "<reason>"] [options]
       tinker-studio registry retire <name@vN> [--reason TEXT]
       tinker-studio registry export-md [--out FILE]
       (every registry command: [--registry FILE], default ./tinker-models.json or $TINKER_STUDIO_REGISTRY)`;

const ACTIONS: readonly RegistryAction[] = ['list', 'show', 'register', 'promote', 'retire', 'export-md', 'gate', 'suite'];

const OPTIONS = {
  ...BACKEND_OPTIONS,
  python: { type: 'string' },
  registry: { type: 'string' },
  checkpoint: { type: 'string' },
  'sampler-path': { type: 'string' },
  'state-path': { type: 'string' },
  'base-model': { type: 'string' },
  renderer: { type: 'string' },
  'lora-rank': { type: 'string' },
  description: { type: 'string' },
  to: { type: 'string' },
  anyway: { type: 'string' },
  reason: { type: 'string' },
  'run-suite': { type: 'boolean' },
  suite: { type: 'string' },
  out: { type: 'string' },
  json: { type: 'boolean' },
} as const;

/** Which options each action takes (besides --registry). */
const ALLOWED: Record<RegistryAction, readonly (keyof typeof OPTIONS)[]> = {
  list: ['json'],
  show: ['json'],
  register: ['checkpoint', 'sampler-path', 'state-path', 'base-model', 'renderer', 'lora-rank', 'description'],
  gate: [],
  suite: ['suite', 'python', 'runs-dir', 'backend', 'base-url', 'cache-dir'],
  promote: ['to', 'anyway', 'reason', 'run-suite', 'suite', 'python', 'runs-dir', 'backend', 'base-url', 'cache-dir'],
  retire: ['reason'],
  'export-md': ['out'],
};

export function parseRegistryArgs(rest: readonly string[]): RegistryArgs {
  const [action, ...more] = rest;
  if (!action || !(ACTIONS as readonly string[]).includes(action)) throw new UsageError(`registry needs an action: ${ACTIONS.join(', ')}${action ? ` (got "${action}")` : ''}`);
  const a = action as RegistryAction;
  const { values: v, flags, positionals } = readOptions(OPTIONS, more);
  for (const k of [...Object.keys(v), ...flags] as (keyof typeof OPTIONS)[]) if (k !== 'registry' && !ALLOWED[a].includes(k)) throw new UsageError(`registry ${a} takes no --${k}`);
  const out: RegistryArgs = { command: 'registry', action: a, ...(v.registry !== undefined ? { registry: v.registry } : {}), ...backendArgs(v), ...(v.python !== undefined ? { python: v.python } : {}) };
  if (flags.has('json')) out.json = true;
  const want = (n: number, what: string) => {
    if (positionals.length !== n) throw new UsageError(`registry ${a} takes ${what}${positionals.length ? ` (got ${positionals.map((p) => `"${p}"`).join(' ')})` : ''}`);
  };
  switch (a) {
    case 'list':
    case 'export-md':
      want(0, 'no positional argument');
      if (v.out !== undefined) out.out = v.out;
      break;
    case 'gate':
      if (positionals.length > 1) want(1, 'one suite file');
      if (positionals[0]) out.suite = positionals[0];
      break;
    case 'show':
    case 'retire':
    case 'suite':
      want(1, 'one model version (name@vN)');
      out.target = positionals[0]!;
      break;
    case 'promote': {
      want(1, 'one model version (name@vN)');
      out.target = positionals[0]!;
      if (v.to !== undefined && v.to !== 'staging' && v.to !== 'production') throw new UsageError(`--to must be staging or production (got "${v.to}")`);
      if (v.to !== undefined) out.to = v.to;
      if (v.anyway !== undefined) {
        if (!v.anyway.trim()) throw new UsageError('--anyway needs a written reason: --anyway "<why this model ships despite the gate>"');
        out.anyway = v.anyway;
      }
      if (flags.has('run-suite')) out.runSuite = true;
      break;
    }
    case 'register': {
      if (positionals.length < 1 || positionals.length > 2) throw new UsageError('registry register takes a model name and a run folder (or --sampler-path)');
      out.target = positionals[0]!;
      if (positionals[1] !== undefined) out.runDir = positionals[1];
      const byPath = v['sampler-path'] !== undefined || v['state-path'] !== undefined;
      if (out.runDir && byPath) throw new UsageError('register from a run folder or from tinker:// paths, not both');
      if (!out.runDir && !byPath) throw new UsageError('registry register needs a run folder or --sampler-path <tinker://…>');
      if (byPath && v['base-model'] === undefined) throw new UsageError('registering tinker:// paths needs --base-model');
      if (out.runDir && (v['base-model'] ?? v.renderer ?? v['lora-rank']) !== undefined) throw new UsageError('a run folder says its base model, renderer and LoRA rank: give them only with --sampler-path');
      const rank = v['lora-rank'];
      if (rank !== undefined && !/^[1-9]\d*$/.test(rank)) throw new UsageError(`--lora-rank must be a whole number ≥ 1 (got "${rank}")`);
      Object.assign(out, {
        ...(v.checkpoint !== undefined ? { checkpoint: v.checkpoint } : {}),
        ...(v['sampler-path'] !== undefined ? { samplerPath: v['sampler-path'] } : {}),
        ...(v['state-path'] !== undefined ? { statePath: v['state-path'] } : {}),
        ...(v['base-model'] !== undefined ? { baseModel: v['base-model'] } : {}),
        ...(v.renderer !== undefined ? { renderer: v.renderer } : {}),
        ...(rank !== undefined ? { loraRank: Number(rank) } : {}),
        ...(v.description !== undefined ? { description: v.description } : {}),
      });
      break;
    }
  }
  if (v.reason !== undefined) out.reason = v.reason;
  if (v.suite !== undefined) out.suite = v.suite;
  return out;
}
