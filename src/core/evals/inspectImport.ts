// "Import Inspect Log…": Inspect AI eval logs (its `.eval` ZIP logs and its JSON logs) read back as an
// eval results folder, so the eval panel, intervals, pass@k and paired comparisons work on them as on
// our own evals. One log is one target (its model); its samples' epochs are our n samples of a problem.
// Every byte is parsed with zod; an error names the file (and the ZIP entry) and the field.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import { writeFileAtomicSync } from '../fs/atomic';
import { openZip, ZipError } from '../fs/zip';
import type { Problem } from '../data/types';
import type { SampleRecord } from '../../protocol/sampleSchema';
import { MANIFEST_FILE, SUMMARY_FILE, TargetSource, targetSamplesFile, type EvalManifest, type EvalSummary } from './results';
import { summarize, targetIdOf, type ResolvedTarget } from './runEval';
import type { EvalSpec } from './spec';
import { DEFAULT_BOOTSTRAP } from './stats';

const Content = z.union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() }))]);
const Message = z.looseObject({ role: z.string(), content: Content });

/** A score's value as Inspect writes it: a number, a letter (C, I, P, N), a boolean, or a dict / list of them. */
const ScoreValue = z.union([z.number(), z.string(), z.boolean(), z.null(), z.array(z.unknown()), z.record(z.string(), z.unknown())]);
const Score = z.looseObject({ value: ScoreValue, answer: z.string().nullish(), explanation: z.string().nullish() });

export const InspectSample = z.looseObject({
  id: z.union([z.string(), z.number()]),
  epoch: z.number().int().positive().default(1),
  input: z.union([z.string(), z.array(Message)]),
  target: z.union([z.string(), z.array(z.string())]).default(''),
  output: z
    .looseObject({
      model: z.string().optional(),
      choices: z.array(z.looseObject({ message: Message, stop_reason: z.string().optional() })).default([]),
      completion: z.string().optional(),
    })
    .optional(),
  scores: z.record(z.string(), Score).nullish(),
  error: z.looseObject({ message: z.string() }).nullish(),
});
export type InspectSample = z.output<typeof InspectSample>;

const InspectEvalSpec = z.looseObject({
  task: z.string().min(1),
  model: z.string().min(1),
  created: z.string().optional(),
  run_id: z.string().optional(),
  config: z.looseObject({ epochs: z.number().int().positive().nullish() }).optional(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
});

/** The header of a log (everything but its samples): Inspect's EvalLog fields this import reads. */
export const InspectHeader = z.looseObject({
  version: z.number().int(),
  status: z.string().default('success'),
  eval: InspectEvalSpec,
  results: z.looseObject({ scores: z.array(z.looseObject({ name: z.string(), scorer: z.string().optional() })).default([]) }).nullish(),
});
const InspectJsonLog = InspectHeader.extend({ samples: z.array(InspectSample).nullish() });

export interface InspectLog {
  file: string;
  format: 'eval' | 'json';
  header: z.output<typeof InspectHeader>;
  samples: InspectSample[];
}

export class InspectLogError extends Error {}

function parseWith<T>(schema: z.ZodType<T>, raw: unknown, where: string): T {
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const i = r.error.issues[0];
  throw new InspectLogError(`${where}:${i && i.path.length ? ` field ${i.path.join('.')}:` : ''} ${i?.message ?? 'invalid'}`);
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InspectLogError(`${where}: not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
}

/** Reads an Inspect log: a `.eval` ZIP (header.json, or the journal of an unfinished log, and samples/*.json) or a JSON log. */
export function readInspectLog(file: string): InspectLog {
  const buf = fs.readFileSync(file);
  if (buf.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) return readEvalZip(file, buf);
  if (file.toLowerCase().endsWith('.eval')) throw new InspectLogError(`${file}: not a ZIP archive, which an Inspect .eval log is`);
  const log = parseWith(InspectJsonLog, parseJson(buf.toString('utf8'), file), file);
  const { samples, ...header } = log;
  return { file, format: 'json', header, samples: samples ?? [] };
}

function readEvalZip(file: string, buf: Buffer): InspectLog {
  try {
    const zip = openZip(buf, file);
    const json = (name: string) => parseJson(zip.read(name).toString('utf8'), `${file}!${name}`);
    let header: z.output<typeof InspectHeader>;
    // header.json once the log is finished; before that, the journal's start (and results, when written)
    if (zip.has('header.json')) header = parseWith(InspectHeader, json('header.json'), `${file}!header.json`);
    else {
      const start = ['_journal/start.json', 'start.json'].find((n) => zip.has(n));
      if (!start) throw new InspectLogError(`${file}: neither header.json nor _journal/start.json: not an Inspect .eval log`);
      const results = ['_journal/results.json', 'results.json'].find((n) => zip.has(n));
      const merged = { status: 'started', ...(json(start) as object), ...(results ? (json(results) as object) : {}) };
      header = parseWith(InspectHeader, merged, `${file}!${start}`);
    }
    const samples = zip
      .names()
      .filter((n) => /^samples\/.+\.json$/.test(n))
      .map((n) => parseWith(InspectSample, json(n), `${file}!${n}`));
    return { file, format: 'eval', header, samples };
  } catch (e) {
    if (e instanceof ZipError) throw new InspectLogError(e.message);
    throw e;
  }
}

/** Inspect's reading of a score value as a number: C = 1, I = 0, P = 0.5, N = 0, yes/true = 1, no/false = 0, numeric text. */
export function scoreAsNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v !== 'string') return undefined;
  const s = v.trim();
  const letters: Record<string, number> = { C: 1, I: 0, P: 0.5, N: 0 };
  if (s in letters) return letters[s];
  const low = s.toLowerCase();
  if (low === 'yes' || low === 'true') return 1;
  if (low === 'no' || low === 'false') return 0;
  return s !== '' && Number.isFinite(Number(s)) ? Number(s) : undefined;
}

/** Which score becomes the reward: `scorer` or `scorer/key` (a dict-valued score); default the log's first scorer (and a dict's first key). */
export function pickScore(sample: InspectSample, choice: string | undefined, scorers: readonly string[]): { value?: number; why?: string } {
  const scores = sample.scores ?? {};
  const [name, key] = choice ? (choice.includes('/') ? [choice.slice(0, choice.indexOf('/')), choice.slice(choice.indexOf('/') + 1)] : [choice, undefined]) : [scorers.find((s) => s in scores) ?? Object.keys(scores)[0], undefined];
  if (name === undefined) return { why: 'the sample has no score' };
  const score = scores[name];
  if (!score) return { why: `the sample has no score "${name}" (it has ${Object.keys(scores).join(', ') || 'none'})` };
  let v: unknown = score.value;
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const dict = v as Record<string, unknown>;
    const k = key ?? Object.keys(dict)[0];
    if (k === undefined || !(k in dict)) return { why: `the score "${name}" has no key "${k}" (it has ${Object.keys(dict).join(', ')})` };
    v = dict[k];
  }
  const value = scoreAsNumber(v);
  return value === undefined ? { why: `the score "${name}${key ? `/${key}` : ''}" is ${JSON.stringify(v)}, not a number, a letter (C/I/P/N) or a boolean` } : { value };
}

const textOf = (c: z.output<typeof Content>) => (typeof c === 'string' ? c : c.map((p) => p.text ?? '').join(''));

function inputMessages(input: InspectSample['input']): Array<{ role: string; content: string }> {
  return typeof input === 'string' ? [{ role: 'user', content: input }] : input.map((m) => ({ role: m.role, content: textOf(m.content) }));
}

function completionOf(s: InspectSample): { text: string; stop: string } {
  const choice = s.output?.choices[0];
  const text = choice ? textOf(choice.message.content) : (s.output?.completion ?? '');
  // Inspect's "max_tokens" is our "length" (the stop rate's one definition); anything else ended on its own
  return { text, stop: choice?.stop_reason === 'max_tokens' ? 'length' : 'stop' };
}

/** The target an Inspect model is: our export's own source when the log came from us, else a tinker:// path or a base model (the provider prefix dropped). */
function targetOfLog(log: InspectLog): { source: TargetSource; model: string; label: string } {
  const own = TargetSource.safeParse(log.header.eval.metadata?.['source']);
  // `openai/<model>` is the route Copy Inspect Command gives; other providers' names are kept whole
  const name = log.header.eval.model.replace(/^openai\//, '');
  if (own.success) {
    const label = own.data.kind === 'base' ? own.data.model : own.data.kind === 'path' ? own.data.path : `${path.basename(own.data.run_dir)}/${own.data.checkpoint}`;
    return { source: own.data, model: own.data.kind === 'base' ? own.data.model : name, label };
  }
  if (name.startsWith('tinker://')) return { source: { kind: 'path', path: name }, model: name, label: name };
  return { source: { kind: 'base', model: name }, model: name, label: name };
}

export interface ImportInspectOptions {
  /** one or more logs: one target each (their tasks should be the same: their samples are matched by id) */
  files: readonly string[];
  /** the results folder to write (replaced) */
  outDir: string;
  /** the score to read as the reward: `scorer` or `scorer/key`; default the first scorer of each log */
  score?: string;
  /** a sample is correct at or above this (pass@k); default 0.5, so C/I and 0/1 scores count as Inspect's accuracy */
  correctThreshold?: number;
  resamples?: number;
}

/** Imports logs as an eval results folder (summary.json, eval.json, targets/<id>/samples.jsonl); returns its summary. */
export function importInspectLogs(o: ImportInspectOptions): EvalSummary {
  if (!o.files.length) throw new InspectLogError('no Inspect log to import');
  const logs = o.files.map((f) => readInspectLog(path.resolve(f)));
  const empty = logs.find((l) => l.samples.length === 0);
  if (empty) throw new InspectLogError(`${empty.file}: the log holds no samples (a log written with --no-log-samples, or one that stopped before any finished): nothing to import`);
  const task = logs[0]!.header.eval.task;
  const name = `inspect-${task.replace(/^.*\//, '').replace(/[^A-Za-z0-9._-]+/g, '_')}`;
  // problems in the first log's order, then any the other logs add
  const problems: Problem[] = [];
  const seen = new Set<string>();
  for (const l of logs)
    for (const s of [...l.samples].sort((a, b) => a.epoch - b.epoch)) {
      const id = String(s.id);
      if (seen.has(id)) continue;
      seen.add(id);
      problems.push({ id, messages: inputMessages(s.input) as Problem['messages'], groundTruth: Array.isArray(s.target) ? s.target.join('\n') : s.target });
    }
  const index = new Map(problems.map((p, i) => [p.id, i]));
  // n: the epochs every log has (a log with fewer epochs leaves the others' extra epochs out)
  const n = Math.min(...logs.map((l) => Math.max(l.header.eval.config?.epochs ?? 1, ...l.samples.map((s) => s.epoch))));
  const targets: ResolvedTarget[] = [];
  const have = new Map<string, Map<string, SampleRecord>>();
  const records = new Map<string, SampleRecord[]>();
  for (const l of logs) {
    const t = targetOfLog(l);
    let id = targetIdOf(t.label);
    for (let k = 2; targets.some((x) => x.id === id); k++) id = `${targetIdOf(t.label)}-${k}`;
    targets.push({ id, label: targets.some((x) => x.label === t.label) ? `${t.label} (${path.basename(l.file)})` : t.label, source: t.source, model: t.model });
    const scorers = (l.header.results?.scores ?? []).map((s) => s.name);
    const m = new Map<string, SampleRecord>();
    const list: SampleRecord[] = [];
    for (const s of l.samples) {
      if (s.epoch > n) continue;
      const pid = String(s.id);
      const { text, stop } = completionOf(s);
      const picked = s.error ? { why: `the sample failed in Inspect: ${s.error.message}` } : pickScore(s, o.score, scorers);
      const msgs = inputMessages(s.input);
      const question = [...msgs].reverse().find((x) => x.role === 'user')?.content ?? '';
      const rec: SampleRecord = {
        group_idx: index.get(pid)!,
        traj_idx: s.epoch - 1,
        problem_id: pid,
        prompt: msgs.map((x) => `${x.role}: ${x.content}`).join('\n'),
        question,
        completion: text,
        content: text,
        ground_truth: problems[index.get(pid)!]!.groundTruth,
        // Inspect logs keep text, not token ids
        completion_tokens: [],
        logprobs: [],
        reward: picked.value ?? 0,
        advantage: 0,
        stop_reason: stop,
        termination: stop === 'length' ? 'max_tokens' : 'stop',
        ...(picked.value === undefined ? { reward_error: { kind: 'InspectScore', message: `${path.basename(l.file)}: sample ${pid} epoch ${s.epoch}: ${picked.why}` } } : {}),
      };
      m.set(`${pid}\u0000${s.epoch - 1}`, rec); // runEval's key of a (problem, sample)
      list.push(rec);
    }
    have.set(id, m);
    records.set(id, list);
  }
  const thr = o.correctThreshold ?? 0.5;
  // the summary's reader of a spec: the logs are the "grader" (a sample's failure points at its log)
  const spec = { name, n, temperature: 0, targets: targets.map((t) => t.label), backend: 'local', concurrency: 1, grader: { file: path.resolve(o.files[0]!), correct_threshold: thr, timeout_ms: 1 } } as unknown as EvalSpec;
  const summary = summarize({ spec, specFile: path.resolve(o.files[0]!), targets, baseline: targets[0]!.id, problems, have, resamples: o.resamples ?? DEFAULT_BOOTSTRAP, createdAt: logs[0]!.header.eval.created ?? new Date().toISOString() });
  // an unfinished log is not a complete eval, whatever its samples say
  if (logs.some((l) => l.header.status !== 'success')) summary.complete = false;
  fs.rmSync(path.join(o.outDir, 'targets'), { recursive: true, force: true });
  for (const t of targets) {
    const file = targetSamplesFile(o.outDir, t.id);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const rows = records.get(t.id)!.sort((a, b) => a.group_idx - b.group_idx || a.traj_idx - b.traj_idx);
    writeFileAtomicSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
  }
  const manifest: EvalManifest = {
    kind: 'eval',
    name,
    spec_file: path.resolve(o.files[0]!),
    spec: { inspect: { task, logs: logs.map((l) => ({ file: l.file, format: l.format, status: l.header.status })), ...(o.score ? { score: o.score } : {}), correct_threshold: thr } },
    targets: targets.map((t) => ({ id: t.id, label: t.label, source: t.source, model: t.model })),
    baseline: targets[0]!.id,
  };
  writeFileAtomicSync(path.join(o.outDir, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');
  writeFileAtomicSync(path.join(o.outDir, SUMMARY_FILE), JSON.stringify(summary, null, 2) + '\n');
  return summary;
}

