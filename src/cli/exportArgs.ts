// Arguments of `tinker-studio export adapter|merge|engine|publish …`, parsed with errors that say what to type.
import { repoIdProblem } from '../core/export/publish';
import { BACKEND_OPTIONS, UsageError, backendArgs, readOptions } from './options';

export interface ExportArgs {
  command: 'export';
  /** engine: an embedded-engine model or checkpoint as a transformers folder (the weights merged); publish: a folder or checkpoint to the Hub */
  kind: 'adapter' | 'merge' | 'engine' | 'publish';
  /** a downloaded checkpoint folder, or a tinker:// path to download first */
  checkpoint: string;
  /** adapter/merge: the folder to write; publish: unused */
  output: string;
  /** publish: owner/name on the Hub, and whether the repo is public (default private) */
  repo?: string;
  public?: boolean;
  /** publish: the registry to record the publish on (default ./tinker-models.json when it exists) */
  registry?: string;
  base?: string;
  baseModel?: string;
  maxShardGb?: number;
  backend?: 'local' | 'cloud' | 'custom';
  baseUrl?: string;
  cacheDir?: string;
  runsDir?: string;
}

export const EXPORT_USAGE = `       tinker-studio export adapter <checkpoint folder | tinker path> --output DIR [--base DIR] [--base-model ID]
       tinker-studio export merge <checkpoint folder | tinker path> --base DIR --output DIR [--max-shard-gb N]
       tinker-studio export engine <engine model | engine checkpoint folder or file | tinker path> --output DIR
       tinker-studio export publish <export folder | tinker path> --repo OWNER/NAME [--public] [--registry FILE]
                      (the token from HF_TOKEN; a private repo unless --public)`;

const OPTIONS = {
  ...BACKEND_OPTIONS,
  output: { type: 'string', short: 'o' },
  base: { type: 'string' },
  'base-model': { type: 'string' },
  'max-shard-gb': { type: 'string' },
} as const;

const PUBLISH_OPTIONS = { ...BACKEND_OPTIONS, repo: { type: 'string' }, public: { type: 'boolean' }, registry: { type: 'string' }, 'base-model': { type: 'string' } } as const;

function parsePublishArgs(rest: readonly string[]): ExportArgs {
  const { values: v, flags, positionals } = readOptions(PUBLISH_OPTIONS, rest);
  if (positionals.length !== 1) throw new UsageError(`export publish takes one folder or checkpoint: an exported adapter or model folder, or a tinker:// path (got ${positionals.length})`);
  if (!v.repo) throw new UsageError('export publish needs --repo OWNER/NAME: the Hugging Face Hub repo to create or update');
  const problem = repoIdProblem(v.repo);
  if (problem) throw new UsageError(problem);
  return {
    command: 'export',
    kind: 'publish',
    checkpoint: positionals[0]!,
    output: '',
    repo: v.repo,
    public: flags.has('public'),
    ...backendArgs(v),
    ...(v.registry !== undefined ? { registry: v.registry } : {}),
    ...(v['base-model'] !== undefined ? { baseModel: v['base-model'] } : {}),
  };
}

export function parseExportArgs(argv: readonly string[]): ExportArgs {
  const [kind, ...rest] = argv;
  if (kind === 'publish') return parsePublishArgs(rest);
  if (kind !== 'adapter' && kind !== 'merge' && kind !== 'engine') throw new UsageError(`export needs what to do: adapter (a PEFT adapter), merge (a merged Hugging Face model), engine (an embedded-engine model as a transformers folder) or publish (to the Hugging Face Hub) (got "${kind ?? ''}")`);
  const { values: v, positionals } = readOptions(OPTIONS, rest);
  if (positionals.length !== 1) throw new UsageError(`export ${kind} takes one checkpoint: a downloaded checkpoint folder or a tinker:// path (got ${positionals.length})`);
  if (!v.output) throw new UsageError(`export ${kind} needs --output DIR (a folder that does not exist yet)`);
  if (kind === 'merge' && !v.base) throw new UsageError('export merge needs --base DIR: the base model\'s Hugging Face folder (config.json, *.safetensors, tokenizer files)');
  let maxShardGb: number | undefined;
  if (v['max-shard-gb'] !== undefined) {
    maxShardGb = Number(v['max-shard-gb']);
    if (!(maxShardGb > 0 && maxShardGb <= 10)) throw new UsageError('--max-shard-gb must be a number above 0 and at most 10');
  }
  return {
    command: 'export',
    kind,
    checkpoint: positionals[0]!,
    output: v.output,
    ...backendArgs(v),
    ...(v.base !== undefined ? { base: v.base } : {}),
    ...(v['base-model'] !== undefined ? { baseModel: v['base-model'] } : {}),
    ...(maxShardGb !== undefined ? { maxShardGb } : {}),
  };
}
