// Starting one reward worker process and carrying its protocol messages, in one of two ways:
//  - 'fd':  JSON lines, requests on the child's fd 3 and answers on its fd 4 (the Python worker), so
//           user prints on stdout/stderr never mix with the protocol;
//  - 'ipc': Node's IPC channel (the Node worker).
// The worker leads its own process group, so killing it also ends anything the user code started.
import { ChildProcess, spawn } from 'child_process';
import { Duplex } from 'stream';
import { StringDecoder } from 'string_decoder';
import { MAX_MESSAGE_LINE_BYTES, OversizedMessage, ToWorker } from './protocol';
import type { WorkerHandlers, WorkerProcess } from './workerStart';
import { parseJsonKeepingNumbers } from '../render/pyJson';

export interface WorkerCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  channel: 'fd' | 'ipc';
}

/** how much of the worker's own output is kept for crash reports */
const TAIL_CHARS = 8192;
const useProcessGroup = process.platform !== 'win32';

export function spawnWorkerProcess<M extends object = ToWorker>(cmd: WorkerCommand, handlers: WorkerHandlers): WorkerProcess<M> {
  const stdio: Array<'ignore' | 'pipe' | 'ipc'> = cmd.channel === 'fd' ? ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe', 'ipc'];
  const child = spawn(cmd.command, cmd.args, { cwd: cmd.cwd, env: cmd.env, stdio, detached: useProcessGroup, serialization: 'json' });
  let tail = '';
  const keep = () => {
    const decoder = new StringDecoder('utf8');
    return (chunk: Buffer) => {
      tail = (tail + decoder.write(chunk)).slice(-TAIL_CHARS);
    };
  };
  child.stdout?.on('data', keep());
  child.stderr?.on('data', keep());

  let finished = false;
  const finish = (code: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => {
    if (finished) return;
    finished = true;
    handlers.exit({ code, signal, outputTail: tail, ...(spawnError ? { spawnError } : {}) });
  };
  child.on('error', (err) => {
    // only a failure to start reaches here in practice (e.g. the interpreter does not exist)
    if (child.pid === undefined) finish(null, null, new Error(`could not start ${cmd.command}: ${err.message}`));
  });
  child.on('exit', () => killGroup(child));
  child.on('close', (code, signal) => finish(code, signal));

  let send: (message: M) => void;
  if (cmd.channel === 'fd') {
    const requests = child.stdio[3];
    const answers = child.stdio[4];
    if (requests instanceof Duplex && answers instanceof Duplex) {
      requests.on('error', () => undefined); // EPIPE after the worker died: 'close' reports it
      answers.on('error', () => undefined);
      answers.on('data', lineSplitter((line) => handlers.message(parseLine(line)), (oversized) => handlers.message(oversized)));
      send = (message) => {
        if (!requests.destroyed) requests.write(JSON.stringify(message) + '\n');
      };
    } else {
      send = () => undefined; // the spawn failed; 'error' reports it
    }
  } else {
    child.on('message', (message: unknown) => handlers.message(message));
    send = (message) => {
      if (child.connected) child.send(message, (err) => void err); // a send racing the worker's death is reported by 'close'
    };
  }
  return {
    get pid() {
      return child.pid;
    },
    send,
    kill: () => killGroup(child),
  };
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    if (useProcessGroup) process.kill(-child.pid, 'SIGKILL');
    else child.kill('SIGKILL');
  } catch {
    // already gone
  }
}

function parseLine(line: string): unknown {
  try {
    return parseJsonKeepingNumbers(line);
  } catch {
    return { type: 'unparseable', text: line.slice(0, 200) };
  }
}

/**
 * Splits the answer stream into lines without ever holding more than `maxBytes` of one line: a longer
 * line is reported as oversized as soon as it passes the cap, and the rest of it is dropped.
 */
export function lineSplitter(onLine: (line: string) => void, onOversized: (info: OversizedMessage) => void, maxBytes = MAX_MESSAGE_LINE_BYTES): (chunk: Buffer) => void {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let skipping = false;
  return (chunk) => {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      const piece = chunk.subarray(start, nl === -1 ? chunk.length : nl);
      if (!skipping) {
        if (pendingBytes + piece.length > maxBytes) {
          skipping = true;
          onOversized({ type: 'oversized', bytes: pendingBytes + piece.length });
          pending = [];
          pendingBytes = 0;
        } else if (piece.length > 0) {
          pending.push(piece);
          pendingBytes += piece.length;
        }
      }
      if (nl === -1) return;
      if (!skipping && pendingBytes > 0) onLine(Buffer.concat(pending).toString('utf8'));
      skipping = false;
      pending = [];
      pendingBytes = 0;
      start = nl + 1;
    }
  };
}
