// The JS/TS reward runner: `computeReward(completion, groundTruth)` (sync or async) in a pool of
// separate Node processes (see nodeWorkerSource.ts) with a V8 heap cap, killed on the time limit.
// Here, in the parent: TypeScript is type-stripped with amaro (positions kept, so lines and columns
// in stacks are the user's), the module format is decided, and CommonJS syntax errors are found
// without running anything.
import * as path from 'path';
import * as vm from 'vm';
import * as z from 'zod';
import { workerEnvironment } from './env';
import { RewardLoadError } from './errors';
import { NODE_WORKER_SOURCE } from './nodeWorkerSource';
import type { LoadErrorDetail, WorkerExit } from './pool';
import { readRewardSource, REWARD_DEFAULTS, startRewardPool } from './source';
import type { WorkerCommand } from './workerProcess';
import type { RewardError, RewardRunner, RewardRunnerOptions } from './types';
import { errorMessage } from '../errors';

type Format = 'commonjs' | 'module';

/** amaro (swc) reports parse errors as plain objects; startColumn is 0-based */
const SwcError = z.object({ code: z.string(), message: z.string(), startLine: z.number().int().positive(), startColumn: z.number().int().nonnegative() });

export async function createNodeRewardRunner(opts: RewardRunnerOptions): Promise<RewardRunner & { pids(): number[] }> {
  const setup = await nodeWorkerSetup(opts, NODE_WORKER_SOURCE, 'computeReward');
  return startRewardPool(opts, setup.command, { file: setup.file, load: setup.load, functionName: 'computeReward', describeCrash: setup.describeCrash, completeLoadError: setup.completeLoadError });
}

/** How a Node worker running `workerSource` is started for a JS/TS file: the command, its `load` message, how its crashes and load errors read. */
export interface NodeWorkerSetup {
  file: string;
  command: Omit<WorkerCommand, 'cwd'>;
  load: { type: 'load'; file: string; source: string; format: Format; memoryMb: number };
  describeCrash(exit: WorkerExit): Pick<RewardError, 'message' | 'traceback' | 'line'>;
  completeLoadError(detail: LoadErrorDetail): LoadErrorDetail;
}

/** Reads (and for TypeScript, type-strips) the file, decides its module format; throws RewardLoadError on a syntax error. */
export async function nodeWorkerSetup(opts: RewardRunnerOptions, workerSource: string, functionName: string): Promise<NodeWorkerSetup> {
  const file = path.resolve(opts.file);
  const ext = path.extname(file).toLowerCase();
  const original = await readRewardSource(file, opts.source);
  const typescript = ext === '.ts' || ext === '.mts' || ext === '.cts';
  const source = typescript ? stripTypes(await loadAmaro(), file, original) : original;
  const format: Format = ext === '.mjs' || ext === '.mts' ? 'module' : detectFormat(file, source, ext === '.cjs' || ext === '.cts');
  const transform = format === 'module' ? await loadAmaro() : undefined;
  const memoryMb = opts.memoryMb ?? REWARD_DEFAULTS.memoryMb;
  return {
    file,
    command: {
      command: process.execPath,
      args: [`--max-old-space-size=${memoryMb}`, '-e', workerSource],
      // ELECTRON_RUN_AS_NODE: inside VS Code, process.execPath is the editor's binary; NODE_OPTIONS
      // could preload debuggers or loaders into user code, so it is dropped
      env: workerEnvironment({ ELECTRON_RUN_AS_NODE: '1' }, withoutNodeOptions(process.env), { allow: opts.environment ?? [] }),
      channel: 'ipc',
    },
    load: { type: 'load', file, source, format, memoryMb },
    describeCrash: (exit) => describeNodeCrash(file, memoryMb, exit, functionName),
    // V8 gives an ES module's syntax error no position; swc's parser does
    completeLoadError: (detail) =>
      transform && detail.line === undefined && detail.message.startsWith('SyntaxError') ? { ...detail, ...swcPosition(transform, file, source) } : detail,
  };
}

type Transform = (typeof import('amaro'))['transformSync'];

/** amaro is large (swc in WebAssembly): loaded only when a JS/TS reward file needs it */
async function loadAmaro(): Promise<Transform> {
  return (await import('amaro')).transformSync;
}

function stripTypes(transformSync: Transform, file: string, source: string): string {
  try {
    return transformSync(source, { mode: 'strip-only', filename: file }).code;
  } catch (err) {
    const swc = SwcError.safeParse(err);
    if (!swc.success) throw new RewardLoadError(file, { message: errorMessage(err) });
    const kind = swc.data.code === 'UnsupportedSyntax' ? 'TypeScript feature not supported' : 'SyntaxError';
    throw new RewardLoadError(file, { message: `${kind}: ${swc.data.message}`, line: swc.data.startLine, column: swc.data.startColumn + 1 });
  }
}

/** position of the first parse error swc finds, if any (used only after V8 rejected the file) */
function swcPosition(transformSync: Transform, file: string, source: string): Pick<LoadErrorDetail, 'line' | 'column'> {
  try {
    transformSync(source, { mode: 'strip-only', filename: file });
  } catch (err) {
    const swc = SwcError.safeParse(err);
    if (swc.success) return { line: swc.data.startLine, column: swc.data.startColumn + 1 };
  }
  return {};
}

/** V8 messages that mean "this is ES module syntax", as Node's own module detection reads them */
const ESM_SYNTAX = /Cannot use import statement outside a module|Unexpected token 'export'|Cannot use 'import\.meta' outside a module|await is only valid in async functions and the top level bodies of modules/;

/** CommonJS unless the code only parses as an ES module; a CommonJS syntax error is a load error */
function detectFormat(file: string, source: string, commonJsOnly: boolean): Format {
  try {
    vm.compileFunction(source, ['exports', 'require', 'module', '__filename', '__dirname'], { filename: file });
    return 'commonjs';
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    if (!commonJsOnly && ESM_SYNTAX.test(err.message)) return 'module';
    throw new RewardLoadError(file, { message: `SyntaxError: ${err.message}`, ...syntaxErrorPosition(file, err) });
  }
}

/** V8 puts "<file>:<line>", the source line and a caret line at the top of a syntax error's stack */
function syntaxErrorPosition(file: string, err: Error): { line?: number; column?: number } {
  const lines = (err.stack ?? '').split('\n');
  const head = /^(.*):(\d+)$/.exec(lines[0] ?? '');
  if (!head || head[1] !== file) return {};
  const caret = (lines[2] ?? '').indexOf('^');
  return caret >= 0 ? { line: Number(head[2]), column: caret + 1 } : { line: Number(head[2]) };
}

function withoutNodeOptions(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _dropped, ...rest } = env;
  return rest;
}

function describeNodeCrash(file: string, memoryMb: number, exit: WorkerExit, functionName: string): Pick<RewardError, 'message' | 'traceback' | 'line'> {
  const tail = exit.outputTail.trim();
  if (/heap out of memory|Reached heap limit/.test(tail)) {
    return { message: `${functionName} ran out of memory (the V8 heap cap is ${memoryMb} MB); the worker was replaced`, traceback: tail.slice(tail.indexOf('FATAL ERROR') >= 0 ? tail.indexOf('FATAL ERROR') : -2000).slice(0, 2000) };
  }
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  const report = /Error|FATAL/.test(tail) ? tail.slice(-4000) : undefined;
  const frame = report ? new RegExp(`${escapeRegExp(file)}:(\\d+):\\d+`).exec(report) : null;
  return {
    message: `the Node worker ${how} while running ${functionName}; it was replaced`,
    ...(report ? { traceback: report } : {}),
    ...(frame ? { line: Number(frame[1]) } : {}),
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
