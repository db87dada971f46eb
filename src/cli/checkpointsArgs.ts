// Arguments of `tinker-studio checkpoints <action> …`, parsed with errors that say what to type.
import { BACKEND_OPTIONS, UsageError, backendArgs, readOptions } from './options';

export type CheckpointsAction = 'list' | 'publish' | 'unpublish' | 'ttl' | 'delete' | 'download';

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
}

export const CHECKPOINTS_USAGE = `       tinker-studio checkpoints list [--run ID | --local] [--limit N] [--offset N] [--json]
       tinker-studio checkpoints publish|unpublish <tinker path>...
       tinker-studio checkpoints ttl <tinker path>... (--ttl 7d | --clear)
       tinker-studio checkpoints delete <tinker path>... --yes
       tinker-studio checkpoints download <tinker path> [--output DIR]`;

const ACTIONS: readonly CheckpointsAction[] = ['list', 'publish', 'unpublish', 'ttl', 'delete', 'download'];

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
} as const;

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
  if (out.action === 'list') {
    if (out.paths.length) throw new UsageError('list takes no paths (use --run ID for one run)');
    if (out.run && out.local) throw new UsageError('give --run or --local, not both');
  } else if (out.paths.length === 0) throw new UsageError(`${out.action} needs at least one tinker:// path`);
  if (out.action === 'download' && out.paths.length > 1) throw new UsageError('download takes one path at a time');
  if (out.action === 'ttl' && (out.ttl === undefined) === (out.clear !== true)) throw new UsageError('ttl needs --ttl <duration> (e.g. 7d) or --clear, one of them');
  return out;
}
