// Starts the embedded engine as a child Node process (`dist/engine.js`) and waits for it to say where
// it listens. Used by the extension (backend "local"), the CLI and tests. The engine prints exactly one
// line "Tinker engine listening on http://127.0.0.1:<port>" when ready.
import { ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export interface EngineProcessOptions {
  /** path of the bundled engine entry (dist/engine.js) */
  entry: string;
  dataDir: string;
  port?: number;
  /** extra environment for the engine process */
  env?: Record<string, string | undefined>;
  /** how long to wait for the ready line (loading weights, spawning workers) */
  startTimeoutMs?: number;
  /** receives the engine's stdout/stderr lines (after the ready line too) */
  onLog?: (line: string) => void;
  signal?: AbortSignal;
}

export interface EngineProcess {
  url: string;
  /** the per-launch token the engine requires as the API key (passed in its environment, never argv) */
  apiKey: string;
  pid: number;
  /** resolves with the exit code once the process has ended */
  readonly exited: Promise<number | null>;
  stop(): Promise<void>;
}

const READY = /Tinker engine listening on (http:\/\/\S+)/;

export function startEngineProcess(opts: EngineProcessOptions): Promise<EngineProcess> {
  const args = ['--port', String(opts.port ?? 0), '--data-dir', opts.dataDir];
  const apiKey = `tml-local-${randomBytes(24).toString('hex')}`;
  const child: ChildProcess = fork(opts.entry, args, {
    execArgv: [],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, ...opts.env, TINKER_ENGINE_TOKEN: apiKey },
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const tail: string[] = [];

  return new Promise<EngineProcess>((resolve, reject) => {
    let ready = false;
    const timer = setTimeout(() => fail(new Error(`the local engine did not start within ${(opts.startTimeoutMs ?? 60_000) / 1000} s`)), opts.startTimeoutMs ?? 60_000);
    const onAbort = () => fail(new Error('starting the local engine was cancelled'));
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    function fail(err: Error): void {
      if (ready) return;
      ready = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      child.kill('SIGKILL');
      const detail = tail.length ? `\n${tail.slice(-20).join('\n')}` : '';
      reject(new Error(`${err.message}${detail}`));
    }

    const onLine = (line: string) => {
      tail.push(line);
      if (tail.length > 50) tail.shift();
      opts.onLog?.(line);
      const m = READY.exec(line);
      if (m && !ready) {
        ready = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        resolve({ url: m[1]!, apiKey, pid: child.pid ?? -1, exited, stop: () => stopChild(child, exited) });
      }
    };
    splitLines(child.stdout, onLine);
    splitLines(child.stderr, onLine);
    child.once('error', (err) => fail(err));
    void exited.then((code) => fail(new Error(`the local engine exited with code ${code} before it was ready`)));
  });
}

function splitLines(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  if (!stream) return;
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      onLine(buf.slice(0, i).replace(/\r$/, ''));
      buf = buf.slice(i + 1);
    }
  });
  stream.on('end', () => {
    if (buf) onLine(buf);
  });
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
