// The Node side of the reward worker, run as `node --max-old-space-size=N -e <this>` with an IPC
// channel: shipped as a string so the esbuild bundle needs no extra file. It loads the reward code
// the parent sends (already type-stripped for .ts, format already decided), then answers batches
// case by case (see protocol.ts). CommonJS goes through Module#_compile under the file's own name;
// ESM through a one-file module hook serving the sent source under the file's own URL, so stack
// traces and relative imports point at the user's file either way.
/**
 * What the reward worker and the environment worker share: the channel, loading the file, the load
 * handshake and the reports of a call's failure (exception, invalid result).
 */
export const NODE_WORKER_COMMON = String.raw`
'use strict';
const Module = require('module');
const path = require('path');
const { pathToFileURL } = require('url');
const { performance } = require('perf_hooks');
const { Worker } = require('worker_threads');
let file = '';
let url = '';
let source = '';

// exit when the parent is gone, even while user code spins on the main thread
new Worker("const { workerData } = require('worker_threads'); setInterval(() => { if (process.ppid !== workerData) process.kill(process.pid, 'SIGKILL'); }, 1000);", { eval: true, workerData: process.ppid }).unref();

const send = (msg) => process.send(msg);

function lineColumnAt(index) {
  const before = source.slice(0, index).split('\n');
  return { line: before.length, column: before[before.length - 1].length + 1 };
}

// the innermost position in the reward file named by an error's stack
function locate(err) {
  const stack = err && typeof err.stack === 'string' ? err.stack : '';
  const lines = stack.split('\n');
  // a syntax error's stack starts "<file>:<line>", the source line, then a caret line
  const head = /^(.*):(\d+)$/.exec(lines[0] || '');
  if (head && (head[1] === file || head[1] === url)) {
    const caret = (lines[2] || '').indexOf('^');
    return caret >= 0 ? { line: Number(head[2]), column: caret + 1 } : { line: Number(head[2]) };
  }
  for (const l of lines) {
    for (const needle of [url + ':', file + ':']) {
      const at = l.indexOf(needle);
      if (at < 0) continue;
      const m = /^(\d+):(\d+)/.exec(l.slice(at + needle.length));
      if (m) return { line: Number(m[1]), column: Number(m[2]) };
    }
  }
  return {};
}

function describe(err) {
  const isError = err instanceof Error || (err && typeof err === 'object' && typeof err.stack === 'string');
  const message = isError ? String(err.name || 'Error') + ': ' + String(err.message) : 'thrown value: ' + rawText(err);
  const info = { message: message.slice(0, 2000) };
  // the worker's own frames ([eval], node internals) say nothing about the user's code
  if (isError) info.traceback = String(err.stack).split('\n').filter((l) => !/^\s+at .*(\[eval\]|node:internal)/.test(l)).join('\n').slice(0, 20000);
  return Object.assign(info, locate(err));
}

function rawText(value) {
  let text;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : typeof value === 'number' || typeof value === 'bigint' || value === undefined || typeof value === 'function' || typeof value === 'symbol' ? String(value) : JSON.stringify(value);
  } catch (e) {
    text = undefined;
  }
  return (text === undefined ? Object.prototype.toString.call(value) : text).slice(0, 1000);
}

function kindOf(value) {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

async function importModule() {
  if (typeof Module.register === 'function') {
    // resolve too: the text may be an editor's unsaved contents of a file not (yet) on disk
    const hooks = 'let target, text; export function initialize(d) { target = d.url; text = d.source; } ' +
      'export async function resolve(s, context, next) { return s === target ? { url: target, format: "module", shortCircuit: true } : next(s, context); } ' +
      'export async function load(u, context, next) { return u === target ? { format: "module", source: text, shortCircuit: true } : next(u, context); }';
    Module.register('data:text/javascript,' + encodeURIComponent(hooks), { data: { url, source } });
  } else if (!file.endsWith('.mjs')) {
    throw new Error('this Node.js (' + process.version + ') cannot load an ES module from transformed source; use CommonJS or a .mjs file');
  }
  return import(url);
}

function loadCommonJs() {
  const m = new Module(file, null);
  m.filename = file;
  m.paths = Module._nodeModulePaths(path.dirname(file));
  require.cache[file] = m;
  m._compile(source, file);
  return m.exports;
}

// the file's exports, from the sent text under the file's own name: throws what loading threw
async function loadExports(msg) {
  file = msg.file;
  url = pathToFileURL(file).href;
  source = msg.source;
  return msg.format === 'module' ? await importModule() : loadCommonJs();
}

// the file's exports, or the load_error answer saying why it did not load
async function exportsOrLoadError(msg) {
  try {
    return { exported: await loadExports(msg) };
  } catch (err) {
    return { loadError: Object.assign({ type: 'load_error' }, describe(err)) };
  }
}

// a call's exception (ident: the call's index or id), with the stack from the user's frames
function exceptionReport(ident, start, err) {
  return Object.assign({ type: 'failure' }, ident, { kind: 'exception', durationMs: performance.now() - start }, describe(err));
}

// a value the parent cannot take; explain(its text, shortened) says why
function invalidResultReport(ident, durationMs, value, explain) {
  const raw = rawText(value);
  return Object.assign({ type: 'failure' }, ident, { kind: 'invalid_result', durationMs, raw, message: explain(raw.slice(0, 80)) });
}

// the handshake, then the requests one at a time, in order: 'load' answers 'ready' or 'load_error'
// (and the worker exits); every later request goes to handle
function serve(load, handle) {
  let chain = Promise.resolve();
  process.on('message', (msg) => {
    chain = chain.then(async () => {
      if (msg.type === 'load') {
        const answer = await load(msg);
        if (answer.type === 'load_error') process.send(answer, () => process.exit(0));
        else send(answer);
      } else {
        await handle(msg);
      }
    });
  });
  process.on('disconnect', () => process.exit(0));
}
`;

export const NODE_WORKER_SOURCE = NODE_WORKER_COMMON + String.raw`
const NAME = 'computeReward';
let fn = null;

function locateDefinition() {
  for (const re of [/\bfunction\s*\*?\s*computeReward\b/, /\b(?:const|let|var)\s+computeReward\b/, /\bcomputeReward\s*[=:(]/]) {
    const m = re.exec(source);
    if (m) return lineColumnAt(m.index + m[0].indexOf(NAME));
  }
  return {};
}

function asNumber(value) {
  const n = typeof value === 'boolean' ? (value ? 1 : 0) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

// a number, or an object { reward: number, format?: number }
function asResult(value) {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const unknown = Object.keys(value).filter((k) => k !== 'reward' && k !== 'format');
    if (unknown.length) return { wrong: 'an object may hold only "reward" and "format" (it has ' + unknown.slice(0, 5).map((k) => JSON.stringify(k)).join(', ') + ')' };
    if (!('reward' in value)) return { wrong: 'an object needs "reward"' };
    const reward = asNumber(value.reward);
    if (reward === undefined) return { wrong: 'its "reward" is not a finite number' };
    if (value.format === undefined || value.format === null) return { reward };
    const format = asNumber(value.format);
    return format === undefined ? { wrong: 'its "format" is not a finite number' } : { reward, format };
  }
  const reward = asNumber(value);
  return reward === undefined ? { wrong: 'not a finite number' } : { reward };
}

function pickFunction(exported) {
  if (typeof exported === 'function' && exported.name === NAME) return exported;
  if (exported && (typeof exported === 'object' || typeof exported === 'function')) {
    if (NAME in exported) return exported[NAME];
    const d = exported.default;
    if (typeof d === 'function' && d.name === NAME) return d;
    if (d && (typeof d === 'object' || typeof d === 'function') && NAME in d) return d[NAME];
  }
  return undefined;
}

async function load(msg) {
  const { exported, loadError } = await exportsOrLoadError(msg);
  if (loadError) return loadError;
  const candidate = pickFunction(exported);
  if (candidate === undefined) {
    return { type: 'load_error', message: 'no function computeReward(completion, groundTruth) is exported: use "export function computeReward" (ES module) or "exports.computeReward = ..." (CommonJS)' };
  }
  if (typeof candidate !== 'function') {
    return Object.assign({ type: 'load_error', message: 'computeReward is ' + (candidate === null ? 'null' : 'a ' + kindOf(candidate)) + ', not a function' }, locateDefinition());
  }
  if (candidate.length !== 2) {
    return Object.assign({ type: 'load_error', message: 'computeReward must take exactly two parameters (completion, groundTruth); it declares ' + candidate.length }, locateDefinition());
  }
  fn = candidate;
  return { type: 'ready' };
}

async function score(msg) {
  for (let index = 0; index < msg.cases.length; index++) {
    const [completion, groundTruth] = msg.cases[index];
    const start = performance.now();
    let value;
    try {
      value = fn(completion, groundTruth);
      if (value !== null && typeof value === 'object' && typeof value.then === 'function') value = await value;
    } catch (err) {
      send(exceptionReport({ index }, start, err));
      continue;
    }
    const durationMs = performance.now() - start;
    const r = asResult(value);
    if (r.wrong === undefined) {
      send(r.format === undefined ? { type: 'reward', index, reward: r.reward, durationMs } : { type: 'reward', index, reward: r.reward, format: r.format, durationMs });
    } else {
      send(invalidResultReport({ index }, durationMs, value, (raw) => 'computeReward returned ' + raw + ' (' + kindOf(value) + '), ' + r.wrong));
    }
  }
}

serve(load, (msg) => (msg.type === 'score' ? score(msg) : undefined));
`;
