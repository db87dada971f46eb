// Command-line arguments of `tinker-studio grpo|sft`, parsed into a plain object with errors that say
// what to type instead.

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

export type CliArgs = GrpoArgs | { command: 'help' };

export const USAGE = `usage: tinker-studio grpo <spec.grpo.json> [options]
       tinker-studio grpo --resume <run dir> [<spec.grpo.json>] [options]
       tinker-studio sft <spec.sft.json> [options]
       tinker-studio sft --resume <run dir> [options]

Runs GRPO or SFT from a run spec and writes the run directory (cookbook layout).

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

export function parseArgs(argv: readonly string[]): CliArgs {
  if (argv.length === 0 || argv.includes('-h') || argv.includes('--help')) return { command: 'help' };
  const [command, ...rest] = argv;
  if (command !== 'grpo' && command !== 'sft') throw new UsageError(`unknown command "${command}" (the commands are "grpo" and "sft")`);
  const out: GrpoArgs = { command };
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    const value = (): string => {
      const v = rest[++i];
      if (v === undefined || v.startsWith('--')) throw new UsageError(`${a} needs a value`);
      return v;
    };
    if (a === '--runs-dir') out.runsDir = value();
    else if (a === '--resume') out.resume = value();
    else if (a === '--base-url') out.baseUrl = value();
    else if (a === '--python') out.python = value();
    else if (a === '--cache-dir') out.cacheDir = value();
    else if (a === '--backend') {
      const v = value();
      if (v !== 'local' && v !== 'cloud' && v !== 'custom') throw new UsageError(`--backend must be local, cloud or custom (got "${v}")`);
      out.backend = v;
    } else if (a.startsWith('-')) throw new UsageError(`unknown option ${a}`);
    else if (out.spec === undefined) out.spec = a;
    else throw new UsageError(`one spec file only (got "${out.spec}" and "${a}")`);
  }
  if (!out.spec && !out.resume) throw new UsageError('give a spec file (or --resume <run dir>)');
  return out;
}
