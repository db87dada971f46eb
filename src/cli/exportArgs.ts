// Arguments of `tinker-studio export adapter|merge …`, parsed with errors that say what to type.
import { BACKEND_OPTIONS, UsageError, backendArgs, readOptions } from './options';

export interface ExportArgs {
  command: 'export';
  /** engine: an embedded-engine model or checkpoint as a transformers folder (the weights merged) */
  kind: 'adapter' | 'merge' | 'engine';
  /** a downloaded checkpoint folder, or a tinker:// path to download first */
  checkpoint: string;
  output: string;
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
       tinker-studio export engine <engine model | engine checkpoint folder or file | tinker path> --output DIR`;

const OPTIONS = {
  ...BACKEND_OPTIONS,
  output: { type: 'string', short: 'o' },
  base: { type: 'string' },
  'base-model': { type: 'string' },
  'max-shard-gb': { type: 'string' },
} as const;

export function parseExportArgs(argv: readonly string[]): ExportArgs {
  const [kind, ...rest] = argv;
  if (kind !== 'adapter' && kind !== 'merge' && kind !== 'engine') throw new UsageError(`export needs what to make: adapter (a PEFT adapter), merge (a merged Hugging Face model) or engine (an embedded-engine model as a transformers folder) (got "${kind ?? ''}")`);
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
