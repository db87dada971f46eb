// Where the embedded engine keeps its checkpoints: ONE store per user, shared by every entry point
// (the CLI, the MCP server, the extension), so a tinker:// path of the embedded engine means the same
// checkpoint everywhere. $TINKER_STUDIO_CACHE_DIR/engine, else $XDG_CACHE_HOME/tinker-studio/engine,
// else ~/.cache/tinker-studio/engine. Tests point TINKER_STUDIO_CACHE_DIR at a temp folder.
import * as os from 'node:os';
import * as path from 'node:path';

/** The user's Tinker Studio cache folder (tokenizers, the engine's store …). */
export function tinkerStudioCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TINKER_STUDIO_CACHE_DIR) return path.resolve(env.TINKER_STUDIO_CACHE_DIR);
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(base, 'tinker-studio');
}

/** The engine's one checkpoint store: `<cache dir>/engine`. */
export function engineStoreDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(tinkerStudioCacheDir(env), 'engine');
}
