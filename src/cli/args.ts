// Command-line arguments of `tinker-studio grpo|sft`, parsed into a plain object with errors that say
// what to type instead.
import { parseArgs as nodeParseArgs } from 'node:util';
import { CHECKPOINTS_USAGE, CheckpointsArgs, parseCheckpointsArgs } from './checkpointsArgs';

export interface GrpoArgs {
  command: 'grpo' | 'sft';
  spec?: string;
  runsDir?: string;
  resume?: string;
  backend?: 'local' | 'cloud' | 'custom';
  baseUrl?: string;
  python?: string;
  cacheDir?: string;
}

/** `tinker-studio mcp`: the agent tools over stdio; the shared flags as for grpo, plus where files resolve. */
export interface McpArgs extends Omit<GrpoArgs, 'command' | 'spec' | 'resume'> {
  command: 'mcp';
  /** relative spec/prompt paths resolve here (default: the current folder) */
  workspace?: string;
  busyWaitMs?: number;
}

export type CliArgs = GrpoArgs | McpArgs | CheckpointsArgs | { command: 'help' };

export const USAGE = `usage: tinker-studio grpo <spec.grpo.json> [options]
       tinker-studio grpo --resume <run dir> [<spec.grpo.json>] [options]
       tinker-studio sft <spec.sft.json> [options]
       tinker-studio sft --resume <run dir> [options]
       tinker-studio mcp [options] [--workspace DIR] [--busy-wait-ms MS]
${CHECKPOINTS_USAGE}

Runs GRPO or SFT from a run spec and writes the run directory (cookbook layout).
"mcp" serves the agent tools (init_grpo, train_grpo_step, init_sft, train_sft_step, sample, save,
load, status, finish) to an MCP client over stdio; relative paths resolve against --workspace (default: the current folder).
"checkpoints" lists and manages checkpoints on the server (default backend: local); bulk actions
report each path and go on past failures (--concurrency N, default 4).

options:
  --runs-dir DIR      where run directories go (default $TINKER_STUDIO_RUNS_DIR, else ./runs)
  --resume DIR        continue a run directory from its last state checkpoint
  --backend KIND      local (embedded engine) | cloud | custom; default: the spec's backend
  --base-url URL      server URL for custom (or cloud); TINKER_BASE_URL also sets the cloud URL
  --python PATH       Python interpreter for .py reward files (default python3)
  --cache-dir DIR     tokenizers, datasets and the local engine's data
                      (default $TINKER_STUDIO_CACHE_DIR, else ~/.cache/tinker-studio)
  -h, --help          this text

The API key for cloud/custom comes from TINKER_API_KEY. Ctrl-C cancels cleanly (the steps done are
kept and a resume point is saved); a second Ctrl-C exits at once.`;

export class UsageError extends Error {}

const SHARED_OPTIONS = {
  'runs-dir': { type: 'string' },
  resume: { type: 'string' },
  backend: { type: 'string' },
  'base-url': { type: 'string' },
  python: { type: 'string' },
  'cache-dir': { type: 'string' },
} as const;
const MCP_OPTIONS = { ...SHARED_OPTIONS, workspace: { type: 'string' }, 'busy-wait-ms': { type: 'string' } } as const;
type OptionName = keyof typeof MCP_OPTIONS;
type BackendKind = NonNullable<GrpoArgs['backend']>;

const isBackendKind = (v: string): v is BackendKind => v === 'local' || v === 'cloud' || v === 'custom';

/**
 * node:util's parseArgs reads the tokens (non-strict, so that the errors below can say what to type);
 * each option token is then checked: known to this command, and given its value.
 */
function readOptions(command: string, rest: string[]): { values: Partial<Record<OptionName, string>>; positionals: string[] } {
  const options: Partial<typeof MCP_OPTIONS> = command === 'mcp' ? MCP_OPTIONS : SHARED_OPTIONS;
  const known = (name: string): name is OptionName => Object.hasOwn(options, name);
  const { tokens } = nodeParseArgs({ args: rest, options, strict: false, allowPositionals: true, tokens: true });
  const values: Partial<Record<OptionName, string>> = {};
  const positionals: string[] = [];
  for (const t of tokens) {
    if (t.kind === 'positional') positionals.push(t.value);
    else if (t.kind === 'option-terminator') continue;
    else if (!known(t.name)) throw new UsageError(`unknown option ${t.rawName}`);
    else if (t.value === undefined || (t.inlineValue === false && t.value.startsWith('--'))) throw new UsageError(`${t.rawName} needs a value`);
    else values[t.name] = t.value;
  }
  return { values, positionals };
}

export function parseArgs(argv: readonly string[]): CliArgs {
  if (argv.length === 0 || argv.includes('-h') || argv.includes('--help')) return { command: 'help' };
  const [command, ...rest] = argv;
  if (command === 'checkpoints') return parseCheckpointsArgs(rest);
  if (command !== 'grpo' && command !== 'sft' && command !== 'mcp') throw new UsageError(`unknown command "${command}" (the commands are "grpo", "sft", "mcp" and "checkpoints")`);
  const { values: v, positionals } = readOptions(command, rest);
  if (positionals.length > 1) throw new UsageError(`one spec file only (got "${positionals[0]}" and "${positionals[1]}")`);
  const backend = v.backend;
  if (backend !== undefined && !isBackendKind(backend)) throw new UsageError(`--backend must be local, cloud or custom (got "${backend}")`);
  const shared = {
    ...(v['runs-dir'] !== undefined ? { runsDir: v['runs-dir'] } : {}),
    ...(backend !== undefined ? { backend } : {}),
    ...(v['base-url'] !== undefined ? { baseUrl: v['base-url'] } : {}),
    ...(v.python !== undefined ? { python: v.python } : {}),
    ...(v['cache-dir'] !== undefined ? { cacheDir: v['cache-dir'] } : {}),
  };
  const spec = positionals[0];
  if (command === 'mcp') {
    if (spec !== undefined || v.resume !== undefined) throw new UsageError('mcp takes no spec file: the agent names it in init_grpo');
    const wait = v['busy-wait-ms'];
    if (wait !== undefined && !/^\d+$/.test(wait)) throw new UsageError('--busy-wait-ms must be a whole number of milliseconds');
    return { command: 'mcp', ...shared, ...(v.workspace !== undefined ? { workspace: v.workspace } : {}), ...(wait !== undefined ? { busyWaitMs: Number(wait) } : {}) };
  }
  if (spec === undefined && v.resume === undefined) throw new UsageError('give a spec file (or --resume <run dir>)');
  return { command, ...(spec !== undefined ? { spec } : {}), ...shared, ...(v.resume !== undefined ? { resume: v.resume } : {}) };
}
