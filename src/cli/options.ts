// The option reader the CLI's commands share: node:util's parseArgs tokens checked with errors that say
// what to type, and the backend options every command takes.
import { parseArgs as nodeParseArgs } from 'node:util';

export class UsageError extends Error {}

/** The options every command takes: where runs go, and which backend with its data. */
export const BACKEND_OPTIONS = {
  'runs-dir': { type: 'string' },
  backend: { type: 'string' },
  'base-url': { type: 'string' },
  'cache-dir': { type: 'string' },
} as const;
export type BackendKind = 'local' | 'cloud' | 'custom';

const isBackendKind = (v: string): v is BackendKind => v === 'local' || v === 'cloud' || v === 'custom';

interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
}
export interface ReadOptions<K extends string> {
  values: Partial<Record<K, string>>;
  flags: Set<K>;
  positionals: string[];
}

/**
 * node:util's parseArgs reads the tokens (non-strict, so that the errors below can say what to type);
 * each option token is then checked: known to this command, and given its value (string options)
 * or none (boolean options, returned in `flags`).
 */
export function readOptions<K extends string>(options: Readonly<Record<K, OptionSpec>>, rest: readonly string[]): ReadOptions<K> {
  const known = (name: string): name is K => Object.hasOwn(options, name);
  const { tokens } = nodeParseArgs({ args: [...rest], options, strict: false, allowPositionals: true, tokens: true });
  const values: Partial<Record<K, string>> = {};
  const flags = new Set<K>();
  const positionals: string[] = [];
  for (const t of tokens) {
    if (t.kind === 'positional') positionals.push(t.value);
    else if (t.kind === 'option-terminator') continue;
    else if (!known(t.name)) throw new UsageError(`unknown option ${t.rawName}`);
    else if (options[t.name].type === 'boolean') {
      if (t.value !== undefined) throw new UsageError(`${t.rawName} takes no value`);
      flags.add(t.name);
    } else if (t.value === undefined || (t.inlineValue === false && t.value.startsWith('--'))) throw new UsageError(`${t.rawName} needs a value`);
    else Object.assign(values, { [t.name]: t.value });
  }
  return { values, positionals, flags };
}

/** The backend options as arguments: only those given, the backend kind checked. */
export function backendArgs(v: Partial<Record<keyof typeof BACKEND_OPTIONS, string>>): { runsDir?: string; backend?: BackendKind; baseUrl?: string; cacheDir?: string } {
  const backend = v.backend;
  if (backend !== undefined && !isBackendKind(backend)) throw new UsageError(`--backend must be local, cloud or custom (got "${backend}")`);
  return {
    ...(v['runs-dir'] !== undefined ? { runsDir: v['runs-dir'] } : {}),
    ...(backend !== undefined ? { backend } : {}),
    ...(v['base-url'] !== undefined ? { baseUrl: v['base-url'] } : {}),
    ...(v['cache-dir'] !== undefined ? { cacheDir: v['cache-dir'] } : {}),
  };
}
