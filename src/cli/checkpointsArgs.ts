// Arguments of `tinker-studio checkpoints <action> …`, parsed with errors that say what to type.
import { UsageError } from './args';

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

export function parseCheckpointsArgs(argv: readonly string[]): CheckpointsArgs {
  const [action, ...rest] = argv;
  if (!ACTIONS.includes(action as CheckpointsAction)) throw new UsageError(`checkpoints needs an action: ${ACTIONS.join(', ')} (got "${action ?? ''}")`);
  const out: CheckpointsArgs = { command: 'checkpoints', action: action as CheckpointsAction, paths: [] };
  const count = (flag: string, v: string, min: number): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new UsageError(`${flag} must be a whole number of at least ${min}`);
    return n;
  };
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    const value = (): string => {
      const v = rest[++i];
      if (v === undefined || v.startsWith('--')) throw new UsageError(`${a} needs a value`);
      return v;
    };
    if (a === '--backend') {
      const v = value();
      if (v !== 'local' && v !== 'cloud' && v !== 'custom') throw new UsageError(`--backend must be local, cloud or custom (got "${v}")`);
      out.backend = v;
    } else if (a === '--base-url') out.baseUrl = value();
    else if (a === '--cache-dir') out.cacheDir = value();
    else if (a === '--runs-dir') out.runsDir = value();
    else if (a === '--run') out.run = value();
    else if (a === '--local') out.local = true;
    else if (a === '--limit') out.limit = count(a, value(), 1);
    else if (a === '--offset') out.offset = count(a, value(), 0);
    else if (a === '--json') out.json = true;
    else if (a === '--ttl') out.ttl = value();
    else if (a === '--clear') out.clear = true;
    else if (a === '--yes' || a === '-y') out.yes = true;
    else if (a === '--output' || a === '-o') out.output = value();
    else if (a === '--concurrency') out.concurrency = count(a, value(), 1);
    else if (a.startsWith('-')) throw new UsageError(`unknown option ${a}`);
    else if (!a.startsWith('tinker://')) throw new UsageError(`"${a}" is not a tinker:// path (copy one from "checkpoints list" or the Checkpoints view)`);
    else out.paths.push(a);
  }
  if (out.action === 'list') {
    if (out.paths.length) throw new UsageError('list takes no paths (use --run ID for one run)');
    if (out.run && out.local) throw new UsageError('give --run or --local, not both');
  } else if (out.paths.length === 0) throw new UsageError(`${out.action} needs at least one tinker:// path`);
  if (out.action === 'download' && out.paths.length > 1) throw new UsageError('download takes one path at a time');
  if (out.action === 'ttl' && (out.ttl === undefined) === (out.clear !== true)) throw new UsageError('ttl needs --ttl <duration> (e.g. 7d) or --clear, one of them');
  return out;
}
