// A static scan of reward code for networking and process-spawning modules (reward functions must
// be offline and deterministic). Nothing is executed: the text is lexed just enough to skip
// comments (and, in Python, string literals), then import statements and a few well-known calls
// are matched, each reported at the exact range of the module name or call.
import { positionAt, RewardDiagnostic } from './diagnostics';

const PYTHON_NETWORK = new Set([
  'socket', 'ssl', 'urllib', 'urllib2', 'urllib3', 'http', 'httplib', 'requests', 'httpx', 'aiohttp', 'ftplib', 'smtplib',
  'poplib', 'imaplib', 'nntplib', 'telnetlib', 'xmlrpc', 'websocket', 'websockets', 'paramiko', 'grpc', 'pycurl', 'socketserver',
]);
const PYTHON_PROCESS = new Set(['subprocess', 'multiprocessing', 'pty', 'pexpect', 'popen2', 'commands']);
/** functions of `os` that start or replace processes */
const OS_PROCESS = /^(system|popen|fork|forkpty|posix_spawn|posix_spawnp|exec[lv]p?e?|spawn[lv]p?e?)$/;

const JS_NETWORK = new Set(['net', 'http', 'https', 'http2', 'dgram', 'tls', 'dns', 'undici', 'axios', 'node-fetch', 'got', 'ws', 'request', 'superagent']);
const JS_PROCESS = new Set(['child_process', 'cluster', 'execa', 'cross-spawn']);
/** globals that reach the network without an import */
const JS_NETWORK_GLOBALS = /(?<![.\w$])(fetch)\s*\(|\bnew\s+(XMLHttpRequest|WebSocket|EventSource)\b/g;

export type ScanLanguage = 'python' | 'javascript';

/** `subject` names the code in the messages ("reward functions", "environments"). */
export function scanForSideEffects(source: string, language: ScanLanguage, subject = 'reward functions'): RewardDiagnostic[] {
  const found = language === 'python' ? scanPython(source) : scanJavaScript(source);
  return found.map((d) => ({
    ...d,
    message:
      d.code === 'network'
        ? `${d.message} reaches the network: ${subject} must run offline and be deterministic`
        : `${d.message} starts other processes: ${subject} must not spawn processes`,
  }));
}

/** a finding whose message is only the offending module or call (scanForSideEffects adds why) */
function diag(code: string, at: number, length: number, kind: 'network' | 'process', what: string): RewardDiagnostic {
  const { line, column } = positionAt(code, at);
  return { line, column, endLine: line, endColumn: column + length, severity: 'warning', message: what, code: kind };
}

function classifyPython(module: string): 'network' | 'process' | undefined {
  const top = module.split('.')[0]!;
  if (PYTHON_NETWORK.has(top)) return 'network';
  if (PYTHON_PROCESS.has(top)) return 'process';
  return undefined;
}

function scanPython(source: string): RewardDiagnostic[] {
  const code = blankPython(source);
  const out: RewardDiagnostic[] = [];
  // `import a.b as c, d` — every listed module
  for (const m of code.matchAll(/^[ \t]*import[ \t]+([^\n;]+)/gm)) {
    const listStart = m.index + m[0].length - m[1]!.length;
    for (const item of m[1]!.matchAll(/([A-Za-z_][\w.]*)(?:[ \t]+as[ \t]+\w+)?/g)) {
      const kind = classifyPython(item[1]!);
      if (kind) out.push(diag(code, listStart + item.index, item[1]!.length, kind, `the module "${item[1]}"`));
    }
  }
  // `from a.b import c, d` — the module, or the process functions taken from os
  for (const m of code.matchAll(/^[ \t]*from[ \t]+([A-Za-z_][\w.]*)[ \t]+import[ \t]+\(?([^\n;)]+)/gm)) {
    const module = m[1]!;
    const moduleAt = m.index + m[0].indexOf(module, m[0].indexOf('from') + 4);
    const kind = classifyPython(module);
    if (kind) {
      out.push(diag(code, moduleAt, module.length, kind, `the module "${module}"`));
      continue;
    }
    if (module !== 'os') continue;
    const namesAt = m.index + m[0].length - m[2]!.length;
    for (const name of m[2]!.matchAll(/[A-Za-z_]\w*/g)) {
      if (OS_PROCESS.test(name[0])) out.push(diag(code, namesAt + name.index, name[0].length, 'process', `os.${name[0]}`));
    }
  }
  // `os.system(...)`, `os.popen(...)`, … written out
  for (const m of code.matchAll(/(?<![\w.])os[ \t]*\.[ \t]*([A-Za-z_]\w*)/g)) {
    if (OS_PROCESS.test(m[1]!)) out.push(diag(code, m.index, m[0].length, 'process', `os.${m[1]}`));
  }
  return out.sort((a, b) => a.line - b.line || a.column - b.column);
}

function classifyJs(specifier: string): 'network' | 'process' | undefined {
  const bare = specifier.replace(/^node:/, '');
  const top = bare.startsWith('@') ? bare.split('/').slice(0, 2).join('/') : bare.split('/')[0]!;
  if (JS_NETWORK.has(top)) return 'network';
  if (JS_PROCESS.has(top)) return 'process';
  return undefined;
}

function scanJavaScript(source: string): RewardDiagnostic[] {
  const code = blankJsComments(source);
  const out: RewardDiagnostic[] = [];
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?(?:[\w*${}\s,]+?\s+from\s*)?(['"])([^'"\n]+)\1/g,
    /(?<![.\w$])require\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g,
    /(?<![.\w$])import\s*\(\s*(['"])([^'"\n]+)\1/g,
  ];
  for (const re of patterns) {
    for (const m of code.matchAll(re)) {
      const spec = m[2]!;
      const kind = classifyJs(spec);
      if (!kind) continue;
      const at = m.index + m[0].lastIndexOf(`${m[1]}${spec}${m[1]}`) + 1;
      out.push(diag(code, at, spec.length, kind, `the module "${spec}"`));
    }
  }
  // globals are matched with string contents blanked too ('fetch(x)' in a string is no call)
  for (const m of blankJsComments(source, true).matchAll(JS_NETWORK_GLOBALS)) {
    const name = m[1] ?? m[2]!;
    const at = m.index + m[0].indexOf(name);
    out.push(diag(code, at, name.length, 'network', name === 'fetch' ? 'fetch()' : name));
  }
  const seen = new Set<string>();
  return out
    .filter((d) => {
      const key = `${d.line}:${d.column}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .sort((a, b) => a.line - b.line || a.column - b.column);
}

/** out[from, to) replaced by spaces (newlines kept), so positions do not move */
function blankChars(out: string[], from: number, to: number): void {
  for (let k = from; k < to; k++) if (out[k] !== '\n' && out[k] !== '\r') out[k] = ' ';
}

/** comments and string literals replaced by spaces (newlines kept), so positions do not move */
function blankPython(source: string): string {
  const out = source.split('');
  const blank = (from: number, to: number) => blankChars(out, from, to);
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (c === '#') {
      const end = source.indexOf('\n', i);
      const stop = end < 0 ? source.length : end;
      blank(i, stop);
      i = stop;
    } else if (c === '"' || c === "'") {
      const triple = source.startsWith(c.repeat(3), i);
      const quote = triple ? c.repeat(3) : c;
      let k = i + quote.length;
      while (k < source.length) {
        if (source[k] === '\\') k += 2;
        else if (source.startsWith(quote, k)) break;
        else if (!triple && source[k] === '\n') break;
        else k++;
      }
      const stop = Math.min(source.length, k + (source.startsWith(quote, k) ? quote.length : 0));
      blank(i, stop);
      i = stop;
    } else i++;
  }
  return out.join('');
}

/** JS/TS comments replaced by spaces; string contents too when `strings` (module specifiers are strings) */
function blankJsComments(source: string, strings = false): string {
  const out = source.split('');
  const blank = (from: number, to: number) => blankChars(out, from, to);
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (c === '/' && source[i + 1] === '/') {
      const end = source.indexOf('\n', i);
      const stop = end < 0 ? source.length : end;
      blank(i, stop);
      i = stop;
    } else if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      const stop = end < 0 ? source.length : end + 2;
      blank(i, stop);
      i = stop;
    } else if (c === '"' || c === "'" || c === '`') {
      let k = i + 1;
      while (k < source.length && source[k] !== c && !(c !== '`' && source[k] === '\n')) k += source[k] === '\\' ? 2 : 1;
      if (strings) blank(i + 1, Math.min(k, source.length));
      i = k + 1;
    } else i++;
  }
  return out.join('');
}
