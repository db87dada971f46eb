// Arguments of `tinker-studio checkpoints <action> …`, parsed with errors that say what to type.
import { BACKEND_OPTIONS, UsageError, backendArgs, readOptions } from './options';

export type CheckpointsAction = 'list' | 'search' | 'publish' | 'unpublish' | 'ttl' | 'delete' | 'download';

export interface CheckpointsArgs {
  command: 'checkpoints';
  action: CheckpointsAction;
  /** tinker:// paths the action applies to */
  paths: string[];
  backend?: 'local' | 'cloud' | 'custom';
  baseUrl?: string;
  cacheDir?: string;
  runsDir?: string;
  /** list: one server run's checkpoints */
  run?: string;
  /** list: the checkpoints the local run directories record, with the server's facts */
  local?: boolean;
  limit?: number;
  offset?: number;
  json?: boolean;
  /** ttl: a duration ("7d"), or clear */
  ttl?: string;
  clear?: boolean;
  /** delete: confirmed */
  yes?: boolean;
  output?: string;
  concurrency?: number;
  /** search: key=value filters on user_metadata (all must match) */
  metadata?: Record<string, string>;
  /** search: checkpoint type (training|state, sampler, external, …) */
  type?: string;
  baseModel?: string;
  project?: string;
}

export const CHECKPOINTS_USAGE = `       tinker-studio checkpoints list [--run ID | --local] [--limit N] [--offset N] [--json]
       tinker-studio checkpoints search [--metadata k=v]... [--type T] [--base-model M] [--project P] [--limit N] [--offset N] [--json]
       tinker-studio checkpoints publish|unpublish <tinker path>...
       tinker-studio checkpoints ttl <tinker path>... (--ttl 7d | --clear)
       tinker-studio checkpoints delete <tinker path>... --yes
       tinker-studio checkpoints download <tinker path> [--output DIR]`;

const ACTIONS: readonly CheckpointsAction[] = ['list', 'search', 'publish', 'unpublish', 'ttl', 'delete', 'download'];

const OPTIONS = {
  ...BACKEND_OPTIONS,
  run: { type: 'string' },
  local: { type: 'boolean' },
  limit: { type: 'string' },
  offset: { type: 'string' },
  json: { type: 'boolean' },
  ttl: { type: 'string' },
  clear: { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  output: { type: 'string', short: 'o' },
  concurrency: { type: 'string' },
  metadata: { type: 'string' },
  type: { type: 'string' },
  'base-model': { type: 'string' },
  project: { type: 'string' },
} as const;

/** Every `--metadata k=v` (the option repeats; the option reader keeps one value per name). */
function metadataFilters(argv: readonly string[]): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  let any = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const text = a === '--metadata' ? argv[i + 1] : a.startsWith('--metadata=') ? a.slice('--metadata='.length) : undefined;
    if (a === '--metadata' && (text === undefined || text.startsWith('--'))) throw new UsageError('--metadata needs a value: key=value');
    if (text === undefined) continue;
    const at = text.indexOf('=');
    if (at <= 0) throw new UsageError(`--metadata "${text}": write key=value (e.g. --metadata run_name=demo)`);
    out[text.slice(0, at)] = text.slice(at + 1);
    any = true;
  }
  return any ? out : undefined;
}

export function parseCheckpointsArgs(argv: readonly string[]): CheckpointsArgs {
  const [action, ...rest] = argv;
  if (!ACTIONS.includes(action as CheckpointsAction)) throw new UsageError(`checkpoints needs an action: ${ACTIONS.join(', ')} (got "${action ?? ''}")`);
  const { values: v, flags, positionals } = readOptions(OPTIONS, rest);
  const count = (flag: 'limit' | 'offset' | 'concurrency', min: number): { [k in typeof flag]?: number } => {
    const text = v[flag];
    if (text === undefined) return {};
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) throw new UsageError(`--${flag} must be a whole number of at least ${min}`);
    return { [flag]: n };
  };
  for (const p of positionals) {
    if (!p.startsWith('tinker://')) throw new UsageError(`"${p}" is not a tinker:// path (copy one from "checkpoints list" or the Checkpoints view)`);
  }
  const out: CheckpointsArgs = {
    command: 'checkpoints',
    action: action as CheckpointsAction,
    paths: positionals,
    ...backendArgs(v),
    ...(v.run !== undefined ? { run: v.run } : {}),
    ...(v.ttl !== undefined ? { ttl: v.ttl } : {}),
    ...(v.output !== undefined ? { output: v.output } : {}),
    ...count('limit', 1),
    ...count('offset', 0),
    ...count('concurrency', 1),
    ...(flags.has('local') ? { local: true } : {}),
    ...(flags.has('json') ? { json: true } : {}),
    ...(flags.has('clear') ? { clear: true } : {}),
    ...(flags.has('yes') ? { yes: true } : {}),
  };
  if (out.action === 'search') {
    const metadata = metadataFilters(rest);
    if (metadata) out.metadata = metadata;
    if (v.type !== undefined) out.type = v.type;
    if (v['base-model'] !== undefined) out.baseModel = v['base-model'];
    if (v.project !== undefined) out.project = v.project;
    if (out.paths.length) throw new UsageError('search takes no paths: filter with --metadata, --type, --base-model, --project');
    return out;
  }
  for (const f of ['metadata', 'type', 'base-model', 'project'] as const) if (v[f] !== undefined) throw new UsageError(`--${f} belongs to "checkpoints search"`);
  if (out.action === 'list') {
    if (out.paths.length) throw new UsageError('list takes no paths (use --run ID for one run)');
    if (out.run && out.local) throw new UsageError('give --run or --local, not both');
  } else if (out.paths.length === 0) throw new UsageError(`${out.action} needs at least one tinker:// path`);
  if (out.action === 'download' && out.paths.length > 1) throw new UsageError('download takes one path at a time');
  if (out.action === 'ttl' && (out.ttl === undefined) === (out.clear !== true)) throw new UsageError('ttl needs --ttl <duration> (e.g. 7d) or --clear, one of them');
  return out;
}
