// Command-line arguments of `tinker-studio <kind>` (a kind of the spec kinds table: grpo, sft, …), parsed into a plain object with errors that say
// what to type instead.
import type { DistillDataOptions } from '../core/distill/distillData';
import { CHECKPOINTS_USAGE, CheckpointsArgs, parseCheckpointsArgs } from './checkpointsArgs';
import { EXPORT_USAGE, type ExportArgs, parseExportArgs } from './exportArgs';
import { REGISTRY_USAGE, parseRegistryArgs, type RegistryArgs } from './registryArgs';
import { BACKEND_OPTIONS, ReadOptions, UsageError, backendArgs, readOptions } from './options';
import { BENCHMARK_NAMES, type BenchmarkName } from '../core/evals/benchmarks/contract';
import { isSpecKind, SPEC_KINDS, type SpecKind } from '../core/spec/kinds';
import { AGENT_TOOLS } from '../core/agent/tools';
import { parseSuiteArgs, SUITE_HELP, SUITE_USAGE, type SuiteArgs } from './suiteArgs';
import { parseUsageArgs, USAGE_HELP, USAGE_USAGE, type UsageArgs } from './usage';

export { UsageError };

export interface GrpoArgs {
  command: SpecKind;
  spec?: string;
  runsDir?: string;
  resume?: string;
  backend?: 'local' | 'cloud' | 'custom';
  baseUrl?: string;
  python?: string;
  cacheDir?: string;
  /** a price table (JSON, over the shipped one) for the cost estimates and max_cost_usd */
  prices?: string;
}

/** `tinker-studio mcp`: the agent tools over stdio; the shared flags as for grpo, plus where files resolve. */
export interface McpArgs extends Omit<GrpoArgs, 'command' | 'spec' | 'resume'> {
  command: 'mcp';
  /** relative spec/prompt paths resolve here (default: the current folder) */
  workspace?: string;
  busyWaitMs?: number;
  /** a session idle this long saves a resume point and releases its clients (default 60; 0: never) */
  idleMinutes?: number;
}

/** `tinker-studio sweep <file.sweep.json|.yaml>`: runs (or resumes) a sweep; the shared flags as for grpo. */
export interface SweepArgs extends Omit<GrpoArgs, 'command' | 'spec' | 'resume'> {
  command: 'sweep';
  file: string;
  maxConcurrent?: number;
}


/** `tinker-studio eval <spec.eval.json> [--out DIR]`: runs (or resumes) an evaluation and prints its table. */
export interface EvalArgs extends Omit<GrpoArgs, 'command' | 'spec' | 'resume'> {
  command: 'eval';
  /** the eval spec; with --benchmark, absent (the positional is the target) */
  spec: string;
  /** `eval --benchmark <name> <model | tinker:// path | run dir>`: a public benchmark on one target, no spec file */
  benchmark?: { name: BenchmarkName; target: string; maxProblems?: number; maxTokens?: number; concurrency?: number; model?: string };
  out?: string;
  /** also write the results as Inspect AI eval logs (one per target) under <results>/inspect/ */
  inspect?: boolean;
}

/** `tinker-studio distill-data --teacher <model|tinker://…> --prompts <jsonl> --out <chats.jsonl>`: off-policy distillation data. */
export interface DistillDataArgs
  extends Omit<GrpoArgs, 'command' | 'spec' | 'resume'>,
    Pick<DistillDataOptions, 'teacher' | 'prompts' | 'out' | 'n' | 'reward' | 'minReward' | 'maxTokens' | 'temperature' | 'seed' | 'renderer' | 'model' | 'promptField'> {
  command: 'distill-data';
}

/** `tinker-studio pairs <run dir> [--out FILE] [--threshold X]`: a GRPO run's training samples → preference pairs. */
export interface PairsArgs {
  command: 'pairs';
  runDir: string;
  out?: string;
  threshold?: number;
}

export type CliArgs = GrpoArgs | McpArgs | SweepArgs | CheckpointsArgs | RegistryArgs | EvalArgs | DistillDataArgs | PairsArgs | SuiteArgs | UsageArgs | ExportArgs | { command: 'help' };

/** `text` broken into lines of at most 104 characters at spaces (the tool list grows with the table). */
function wrapped(text: string, width = 104): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].join('\n');
}

const KIND_USAGE = SPEC_KINDS.flatMap((k) => [
  `tinker-studio ${k.id} <spec${k.extension}> [options]`,
  `tinker-studio ${k.id} --resume <run dir> [<spec${k.extension}>] [options]`,
]);

export const USAGE = `usage: ${KIND_USAGE.join('\n       ')}
       tinker-studio sweep <file.sweep.json|.yaml> [--max-concurrent N] [options]
       tinker-studio eval <spec.eval.json> [--out DIR] [--inspect] [options]
       tinker-studio eval --benchmark <${BENCHMARK_NAMES.join('|')}> <model | tinker://… | run dir>
                    [--max-problems N] [--max-tokens N] [--concurrency N] [--model BASE] [--out DIR] [options]
${SUITE_USAGE}
       tinker-studio distill-data --teacher <model | tinker://…> --prompts <jsonl> --out <chats.jsonl>
                    [--n N] [--reward <file> [--min-reward R]] [--max-tokens N] [--temperature T] [--seed S]
                    [--renderer NAME] [--model BASE] [--prompt-field F] [options]
       tinker-studio pairs <GRPO run dir> [--out FILE] [--threshold X]
       tinker-studio mcp [options] [--workspace DIR] [--busy-wait-ms MS] [--idle-minutes N]
${CHECKPOINTS_USAGE}
${EXPORT_USAGE}
${REGISTRY_USAGE}
${USAGE_USAGE}

Runs ${SPEC_KINDS.map((k) => k.label).join(' or ')} from a run spec and writes the run directory (cookbook layout).
Distillation is a spec's field: a GRPO spec's "teacher" (on-policy: the reverse KL to it on the student's samples),
an SFT spec's "teacher" with "n_teacher_targets" K (off-policy: the teacher's top-K next tokens per position as soft targets).
"sweep" runs every point of a sweep file as a run under <runs dir>/<sweep name>/<point name>/ and prints
the ranking; run it again to resume (finished runs are skipped). --max-concurrent N: runs at once
(default: the file's max_concurrent, else 1 on the embedded engine, 4 on cloud/custom).
${wrapped(`"mcp" serves the ${AGENT_TOOLS.length} agent tools (${AGENT_TOOLS.map((t) => t.name).join(', ')}) to an MCP client over stdio; relative paths resolve against --workspace (default: the current folder).`)}
A session idle for --idle-minutes (default 60; 0: never) saves a resume point and releases its clients;
the next call reconnects.
"eval" scores base models and checkpoints on a dataset (an eval spec) and prints the table with 95 %
intervals and the paired comparison with the baseline; results go to evals/<spec name>/ next to the
spec (or --out DIR), and re-running resumes, sampling only what is missing; --inspect also writes
them as Inspect AI eval logs (one per target, <results>/inspect/) for \`inspect view\`. With --benchmark, a
public benchmark (graded as the cookbook grades it) on one base model, tinker:// checkpoint (--model: its
base) or run directory (its sampler checkpoints): --max-problems N takes a seeded subset (the same on every
run); results go to evals/<benchmark>-<target>/ (or --out DIR) and re-running resumes.
${SUITE_HELP}
"distill-data" samples a teacher (a base model, or a tinker:// sampler checkpoint whose base model
the server names, or --model) N times (default 1) on each prompt of a JSONL file ("question" or a
"messages" chat; "answer" is the reward's ground truth) and writes the answers as SFT chats
({"messages": [...], "distilled": {teacher, sampling settings, sample, reward}}) with
<out>.provenance.json beside; --reward keeps only the samples scoring at least --min-reward (default
0.5). Defaults: --max-tokens 256, --temperature 1; the local backend unless --backend.
"pairs" turns a GRPO run's training samples into preference pairs for DPO: per group, the best sample
against the worst when their rewards differ by at least --threshold (default 0.5); the holdout's
samples are never used. Writes JSONL to --out (default <run dir>/pairs.jsonl), with provenance.
"checkpoints" lists and manages checkpoints on the server (default backend: local); bulk actions
report each path and go on past failures (--concurrency N, default 4).
"export" turns a checkpoint into a PEFT adapter folder, or merges it into the base model's Hugging Face folder
(shards of at most 10 GB), each with a model card; "export engine" writes an engine model as transformers loads
it; "export publish" puts an export in a Hugging Face Hub repo. See docs/export.md.
"registry" keeps which checkpoint is which model version (tinker-models.json, and MODELS.md from it):
promoting to production passes the gate suite's rules against the production version, paired on the
same items, or is refused with every reason (--anyway "<reason>" promotes past it; the reason is kept).
${USAGE_HELP}

options:
  --runs-dir DIR      where run directories go (default $TINKER_STUDIO_RUNS_DIR, else ./runs)
  --resume DIR        continue a run directory from its last state checkpoint
  --backend KIND      local (embedded engine) | cloud | custom; default: the spec's backend
  --base-url URL      server URL for custom (or cloud); TINKER_BASE_URL also sets the cloud URL
  --python PATH       Python interpreter for .py reward files (default python3)
  --prices FILE       prices for the cost estimates and max_cost_usd (JSON, as the tinker.prices
                      setting; default $TINKER_STUDIO_PRICES, else the shipped table: docs/cost.md)
  --cache-dir DIR     tokenizers, datasets and the local engine's checkpoint store (DIR/engine,
                      the one the extension uses too) (default $TINKER_STUDIO_CACHE_DIR, else
                      $XDG_CACHE_HOME/tinker-studio, else ~/.cache/tinker-studio)
  -h, --help          this text

The API key for cloud/custom comes from TINKER_API_KEY. Ctrl-C cancels cleanly (the steps done are
kept and a resume point is saved); a second Ctrl-C exits at once.`;

const SHARED_OPTIONS = { ...BACKEND_OPTIONS, resume: { type: 'string' }, python: { type: 'string' } } as const;
const RUN_OPTIONS = { ...SHARED_OPTIONS, prices: { type: 'string' } } as const;
const SWEEP_OPTIONS = { ...BACKEND_OPTIONS, python: { type: 'string' }, 'max-concurrent': { type: 'string' }, prices: { type: 'string' } } as const;
const MCP_OPTIONS = { ...SHARED_OPTIONS, workspace: { type: 'string' }, 'busy-wait-ms': { type: 'string' }, 'idle-minutes': { type: 'string' } } as const;

export function parseArgs(argv: readonly string[]): CliArgs {
  if (argv.length === 0 || argv.includes('-h') || argv.includes('--help')) return { command: 'help' };
  const [command, ...rest] = argv;
  if (command === 'checkpoints') return parseCheckpointsArgs(rest);
  if (command === 'registry') return parseRegistryArgs(rest);
  if (command === 'export') return parseExportArgs(rest);
  if (command === 'sweep') return parseSweepArgs(rest);
  if (command === 'eval') return parseEvalArgs(rest);
  if (command === 'suite') return parseSuiteArgs(rest);
  if (command === 'distill-data') return parseDistillDataArgs(rest);
  if (command === 'pairs') return parsePairsArgs(rest);
  if (command === 'usage') return parseUsageArgs(rest);
  if (!isSpecKind(command) && command !== 'mcp')
    throw new UsageError(`unknown command "${command}" (the commands are ${[...SPEC_KINDS.map((k) => k.id), 'sweep', 'eval', 'suite', 'distill-data', 'pairs', 'mcp', 'registry', 'usage', 'export'].map((c) => `"${c}"`).join(', ')} and "checkpoints")`);
  const { values: v, positionals }: ReadOptions<keyof typeof MCP_OPTIONS | 'prices'> = command === 'mcp' ? readOptions(MCP_OPTIONS, rest) : readOptions(RUN_OPTIONS, rest);
  if (positionals.length > 1) throw new UsageError(`one spec file only (got "${positionals[0]}" and "${positionals[1]}")`);
  const shared = { ...backendArgs(v), ...(v.python !== undefined ? { python: v.python } : {}) };
  const spec = positionals[0];
  if (command === 'mcp') {
    if (spec !== undefined || v.resume !== undefined) throw new UsageError('mcp takes no spec file: the agent names it in init_grpo');
    const wait = v['busy-wait-ms'];
    if (wait !== undefined && !/^\d+$/.test(wait)) throw new UsageError('--busy-wait-ms must be a whole number of milliseconds');
    const idle = v['idle-minutes'];
    if (idle !== undefined && !/^\d+(\.\d+)?$/.test(idle)) throw new UsageError('--idle-minutes must be a number of minutes (0: never)');
    return { command: 'mcp', ...shared, ...(v.workspace !== undefined ? { workspace: v.workspace } : {}), ...(wait !== undefined ? { busyWaitMs: Number(wait) } : {}), ...(idle !== undefined ? { idleMinutes: Number(idle) } : {}) };
  }
  if (spec === undefined && v.resume === undefined) throw new UsageError('give a spec file (or --resume <run dir>)');
  return { command, ...(spec !== undefined ? { spec } : {}), ...shared, ...(v.resume !== undefined ? { resume: v.resume } : {}), ...(v.prices !== undefined ? { prices: v.prices } : {}) };
}

function parseSweepArgs(rest: readonly string[]): SweepArgs {
  const { values: v, positionals }: ReadOptions<keyof typeof SWEEP_OPTIONS> = readOptions(SWEEP_OPTIONS, rest);
  if (positionals.length !== 1) throw new UsageError(positionals.length ? `one sweep file only (got "${positionals[0]}" and "${positionals[1]}")` : 'give a sweep file (*.sweep.json or *.sweep.yaml)');
  const mc = v['max-concurrent'];
  if (mc !== undefined && !/^[1-9]\d*$/.test(mc)) throw new UsageError('--max-concurrent must be a whole number ≥ 1');
  return { command: 'sweep', file: positionals[0], ...backendArgs(v), ...(v.python !== undefined ? { python: v.python } : {}), ...(mc !== undefined ? { maxConcurrent: Number(mc) } : {}), ...(v.prices !== undefined ? { prices: v.prices } : {}) };
}

const EVAL_OPTIONS = {
  'runs-dir': BACKEND_OPTIONS['runs-dir'],
  backend: BACKEND_OPTIONS.backend,
  'base-url': BACKEND_OPTIONS['base-url'],
  'cache-dir': BACKEND_OPTIONS['cache-dir'],
  out: { type: 'string' },
  python: { type: 'string' },
  inspect: { type: 'boolean' },
  benchmark: { type: 'string' },
  'max-problems': { type: 'string' },
  'max-tokens': { type: 'string' },
  concurrency: { type: 'string' },
  model: { type: 'string' },
  prices: { type: 'string' },
} as const;

function positiveIntOption(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(v)) throw new UsageError(`--${name} must be a whole number above 0 (got "${v}")`);
  return Number(v);
}

const PAIRS_OPTIONS = { out: { type: 'string' }, threshold: { type: 'string' } } as const;

function parsePairsArgs(rest: readonly string[]): PairsArgs {
  const { values: v, positionals } = readOptions(PAIRS_OPTIONS, rest);
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'give a GRPO run directory' : `one run directory only (got "${positionals[0]}" and "${positionals[1]}")`);
  const t = v.threshold;
  if (t !== undefined && !(/^\d*\.?\d+$/.test(t) && Number(t) > 0)) throw new UsageError('--threshold must be a number above 0 (a reward difference, e.g. 0.5)');
  return { command: 'pairs', runDir: positionals[0]!, ...(v.out !== undefined ? { out: v.out } : {}), ...(t !== undefined ? { threshold: Number(t) } : {}) };
}

function parseEvalArgs(rest: readonly string[]): EvalArgs {
  const { values: v, positionals, flags } = readOptions(EVAL_OPTIONS, rest);
  const name = v.benchmark;
  if (name !== undefined && !(BENCHMARK_NAMES as readonly string[]).includes(name)) throw new UsageError(`--benchmark must be one of ${BENCHMARK_NAMES.join(', ')} (got "${name}")`);
  if (name === undefined) for (const o of ['max-problems', 'max-tokens', 'concurrency', 'model'] as const) if (v[o] !== undefined) throw new UsageError(`--${o} is for --benchmark (an eval spec sets it in the file)`);
  if (positionals.length !== 1)
    throw new UsageError(
      name !== undefined
        ? positionals.length === 0 ? `give what to evaluate on ${name}: a base model, a tinker:// checkpoint or a run directory` : `one target only (got "${positionals[0]}" and "${positionals[1]}")`
        : positionals.length === 0 ? 'give an eval spec file (*.eval.json), or --benchmark <name> <model>' : `one eval spec only (got "${positionals[0]}" and "${positionals[1]}")`,
    );
  const maxProblems = positiveIntOption('max-problems', v['max-problems']);
  const maxTokens = positiveIntOption('max-tokens', v['max-tokens']);
  const concurrency = positiveIntOption('concurrency', v.concurrency);
  return {
    command: 'eval',
    spec: positionals[0]!,
    ...(name !== undefined
      ? {
          benchmark: {
            name: name as BenchmarkName,
            target: positionals[0]!,
            ...(maxProblems !== undefined ? { maxProblems } : {}),
            ...(maxTokens !== undefined ? { maxTokens } : {}),
            ...(concurrency !== undefined ? { concurrency } : {}),
            ...(v.model !== undefined ? { model: v.model } : {}),
          },
        }
      : {}),
    ...backendArgs(v),
    ...(v.python !== undefined ? { python: v.python } : {}),
    ...(v.out !== undefined ? { out: v.out } : {}),
    ...(flags.has('inspect') ? { inspect: true } : {}),
    ...(v.prices !== undefined ? { prices: v.prices } : {}),
  };
}

const DISTILL_OPTIONS = {
  ...BACKEND_OPTIONS,
  python: { type: 'string' },
  teacher: { type: 'string' },
  prompts: { type: 'string' },
  out: { type: 'string' },
  n: { type: 'string' },
  reward: { type: 'string' },
  'min-reward': { type: 'string' },
  'max-tokens': { type: 'string' },
  temperature: { type: 'string' },
  seed: { type: 'string' },
  renderer: { type: 'string' },
  model: { type: 'string' },
  'prompt-field': { type: 'string' },
} as const;

function parseDistillDataArgs(rest: readonly string[]): DistillDataArgs {
  const { values: v, positionals } = readOptions(DISTILL_OPTIONS, rest);
  if (positionals.length) throw new UsageError(`distill-data takes no positional argument (got "${positionals[0]}")`);
  for (const k of ['teacher', 'prompts', 'out'] as const) if (v[k] === undefined) throw new UsageError(`distill-data needs --${k}`);
  const int = (k: 'n' | 'max-tokens' | 'seed', min: number) => {
    const s = v[k];
    if (s === undefined) return undefined;
    if (!/^\d+$/.test(s) || Number(s) < min) throw new UsageError(`--${k} must be a whole number ≥ ${min} (got "${s}")`);
    return Number(s);
  };
  const num = (k: 'min-reward' | 'temperature') => {
    const s = v[k];
    if (s === undefined) return undefined;
    const x = Number(s);
    if (s.trim() === '' || !Number.isFinite(x) || (k === 'temperature' && x < 0)) throw new UsageError(`--${k} must be a number${k === 'temperature' ? ' ≥ 0' : ''} (got "${s}")`);
    return x;
  };
  const n = int('n', 1);
  const maxTokens = int('max-tokens', 1);
  const seed = int('seed', 0);
  const minReward = num('min-reward');
  const temperature = num('temperature');
  if (minReward !== undefined && v.reward === undefined) throw new UsageError('--min-reward needs --reward');
  return {
    command: 'distill-data',
    teacher: v.teacher!,
    prompts: v.prompts!,
    out: v.out!,
    ...backendArgs(v),
    ...(v.python !== undefined ? { python: v.python } : {}),
    ...(n !== undefined ? { n } : {}),
    ...(v.reward !== undefined ? { reward: v.reward } : {}),
    ...(minReward !== undefined ? { minReward } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(v.renderer !== undefined ? { renderer: v.renderer } : {}),
    ...(v.model !== undefined ? { model: v.model } : {}),
    ...(v['prompt-field'] !== undefined ? { promptField: v['prompt-field'] } : {}),
  };
}
