// The environment reward workers run with: an allowlist of what interpreters and common libraries
// need (search paths, locale, temp folders, Python/conda/virtualenv setup, thread counts), plus the
// names the user lists (`tinker.rewardEnvironment`, `--reward-env`). Reward code is user code; it
// must not see the Tinker API key or other credentials the editor or shell happens to hold.

/** names (or NAME_* prefixes) passed through on every platform */
const ALLOWED = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'LC_*',
  'TZ',
  'TERM',
  'TMPDIR',
  'TMP',
  'TEMP',
  'PYTHON*',
  'VIRTUAL_ENV',
  'CONDA_PREFIX',
  'CONDA_DEFAULT_ENV',
  'CONDA_EXE',
  'CONDA_PYTHON_EXE',
  'PYENV_ROOT',
  'PYENV_VERSION',
  'NODE_PATH',
  'LD_LIBRARY_PATH',
  'DYLD_LIBRARY_PATH',
  'OMP_NUM_THREADS',
  'MKL_NUM_THREADS',
  'OPENBLAS_NUM_THREADS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
];

/** what Windows programs (Python included) need to start and find their folders */
const ALLOWED_WINDOWS = [
  'SYSTEMROOT',
  'SYSTEMDRIVE',
  'WINDIR',
  'COMSPEC',
  'PATHEXT',
  'USERPROFILE',
  'HOMEDRIVE',
  'HOMEPATH',
  'APPDATA',
  'LOCALAPPDATA',
  'PROGRAMDATA',
  'PROGRAMFILES',
  'PROGRAMFILES(X86)',
  'NUMBER_OF_PROCESSORS',
  'PROCESSOR_ARCHITECTURE',
];

/** never passed, even when listed: the key this extension manages */
const NEVER = new Set(['TINKER_API_KEY']);
/** names of the built-in allowlist that still look like credentials are left out (PYTHON_KEYRING_TOKEN) */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL/i;

function matcher(patterns: readonly string[], caseInsensitive: boolean): (name: string) => boolean {
  const norm = (s: string) => (caseInsensitive ? s.toUpperCase() : s);
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const p of patterns) {
    const t = norm(p.trim());
    if (!t) continue;
    if (t.endsWith('*')) prefixes.push(t.slice(0, -1));
    else exact.add(t);
  }
  return (name) => {
    const n = norm(name);
    return exact.has(n) || prefixes.some((p) => n.startsWith(p));
  };
}

export interface WorkerEnvironmentOptions {
  /** further names (or NAME_* prefixes) the user allows */
  allow?: readonly string[];
  platform?: NodeJS.Platform;
}

export function workerEnvironment(extra: Record<string, string> = {}, source: NodeJS.ProcessEnv = process.env, opts: WorkerEnvironmentOptions = {}): Record<string, string> {
  const windows = (opts.platform ?? process.platform) === 'win32';
  const builtIn = matcher(windows ? [...ALLOWED, ...ALLOWED_WINDOWS] : ALLOWED, windows);
  const listed = matcher(opts.allow ?? [], windows);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || NEVER.has(name.toUpperCase())) continue;
    if (listed(name) || (builtIn(name) && !SECRET_NAME.test(name))) env[name] = value;
  }
  return { ...env, ...extra };
}
