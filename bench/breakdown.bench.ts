// The GRPO group breakdown panel's data work at 1,024 groups × 16 samples × 256 tokens, as the
// panel does it: to first paint — the host's summaries of the read records (previews, one prompt per
// group), the snapshot's JSON round trip (the webview's message transport clones it), the zod check
// the webview client runs on it, grouping, header statistics, the first view and the first screenful
// of rows; per filter change — the view (kind toggle, reward-error and truncation filters) and, for a
// search typed key by key, the host's search with its reply's round trip, then the view. Reading and
// parsing the samples file is printed apart (it is the same for any payload). "Open iteration" is the
// user's wait: from opening the iteration (the host reading the file from disk included) to the first
// paint's data, as a whole-file read (before) and as the chunked read the panel does (first groups,
// then the complete snapshot). Runs in Node: the
// browser's own layout and paint of one screenful (~40 rows) is not included. Prints ms; asserts nothing.
//   BENCH=breakdown node scripts/bench.mjs       GROUPS=1024 GROUP_SIZE=16 TOKENS=256 REPS=5
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SampleRecord } from '../src/core/runs/sampleRecord';
import { parseSamples, readSamplesInChunks, samplesFile } from '../src/core/runs/sampleRecord';
import { summarizeIteration } from '../src/protocol/sampleSchema';
import { breakdownStats, buildGroups, GroupFilter, NO_FILTER, searchGroups, searchIndex, viewGroups } from '../src/protocol/breakdown';
import { BreakdownRequests, ToWebview } from '../src/protocol/breakdownProtocol';

const GROUPS = Number(process.env.GROUPS ?? 1024);
const GROUP_SIZE = Number(process.env.GROUP_SIZE ?? 16);
const TOKENS = Number(process.env.TOKENS ?? 256);
const REPS = Number(process.env.REPS ?? 5);

function records(): SampleRecord[] {
  const out: SampleRecord[] = [];
  const words = ['the', 'answer', 'is', 'so', 'we', 'add', 'carry', 'one', 'then'];
  for (let p = 0; p < GROUPS; p++) {
    for (let t = 0; t < GROUP_SIZE; t++) {
      const reward = p % 4 === 0 ? 1 : p % 4 === 1 ? 0 : (t + p) % 3 === 0 ? 1 : 0;
      const tokens = Array.from({ length: TOKENS }, (_, i) => (p * 31 + t * 7 + i) % 50_000);
      out.push({
        group_idx: p,
        traj_idx: t,
        problem_id: `arith:${p}`,
        prompt: `<|im_start|>user\nWhat is ${p} + ${p * 3}? Think step by step.<|im_end|>\n<|im_start|>assistant\n`,
        completion: tokens.map((k) => words[k % words.length]).join(' '),
        content: String(p * 4),
        ground_truth: String(p * 4),
        completion_tokens: tokens,
        logprobs: tokens.map((k) => -((k % 100) / 50)),
        reward,
        advantage: reward - 0.5,
        stop_reason: t === 0 && p % 9 === 0 ? 'length' : 'stop',
        termination: 'eos',
        ...(p % 50 === 0 && t === 1 ? { reward_error: { kind: 'exception', message: 'ValueError', line: 12 } } : {}),
      });
    }
  }
  return out;
}

function time<T>(fn: () => T): [T, number] {
  const t0 = performance.now();
  const v = fn();
  return [v, performance.now() - t0];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const full = records();
const fileText = full.map((r) => JSON.stringify(r)).join('\n') + '\n';
const apart: Record<string, number[]> = {};
const phases: Record<string, number[]> = {};
const add = (name: string, ms: number, to = phases) => (to[name] ??= []).push(ms);
let payloadBytes = 0;
for (let rep = 0; rep < REPS; rep++) {
  add(`host: read + parse the samples file (${(fileText.length / 2 ** 20).toFixed(0)} MiB)`, time(() => parseSamples(fileText, 'train_samples.jsonl'))[1], apart);
  const [summary, tSummary] = time(() => summarizeIteration(full));
  add('host: summaries (previews, one prompt per group)', tSummary);
  const snapshot = {
    type: 'snapshot',
    runName: 'bench',
    runDir: '/runs/bench',
    shown: { iteration: 0, split: 'train' },
    available: { train: [0], eval: [] },
    ...summary,
    step: { kl: 0.001, entropy: 1.2 },
    problems: [],
  };
  const [wire, tWire] = time(() => {
    const json = JSON.stringify(snapshot);
    payloadBytes = json.length;
    return JSON.parse(json) as unknown;
  });
  add('transport (JSON round trip)', tWire);
  const [parsed, tZod] = time(() => ToWebview.parse(wire));
  add('zod check of the snapshot', tZod);
  if (parsed.type !== 'snapshot') throw new Error('not a snapshot');
  const [groups, tGroups] = time(() => buildGroups(parsed.records, parsed.prompts));
  add('group', tGroups);
  add('header statistics', time(() => breakdownStats(groups))[1]);
  add('first view + first screen of rows', time(() => viewGroups(groups, NO_FILTER, 'index').slice(0, 40))[1]);

  const filters: GroupFilter[] = [{ ...NO_FILTER, kinds: ['mixed'] }, { ...NO_FILTER, rewardError: true }, { ...NO_FILTER, truncated: true }];
  for (const f of filters) add('filter change (worst of kind/error/truncation)', time(() => viewGroups(groups, f, 'reward-desc'))[1]);
  // the host builds its search index on the first search of an iteration
  const [index, tIndex] = time(() => searchIndex(full));
  add('host: search index (first search of an iteration)', tIndex, apart);
  for (const text of 'carry one'.split('').map((_, i) => 'carry one'.slice(0, i + 1))) {
    const f = { ...NO_FILTER, text };
    add(
      'filter change (worst search key: host search, reply, view)',
      time(() => {
        const reply = BreakdownRequests.search.result.parse(JSON.parse(JSON.stringify({ groups: searchGroups(index, text) })));
        return viewGroups(groups, f, 'reward-desc', new Set(reply.groups));
      })[1],
    );
  }
}

// the panel's path from records to the first screen of rows (as above, in one go)
function paint(rs: readonly SampleRecord[]): number {
  const t0 = performance.now();
  const wire: unknown = JSON.parse(JSON.stringify({ type: 'snapshot', runName: 'bench', runDir: '/runs/bench', shown: { iteration: 0, split: 'train' }, available: { train: [0], eval: [] }, ...summarizeIteration(rs), step: { kl: null, entropy: null }, problems: [] }));
  const parsed = ToWebview.parse(wire);
  if (parsed.type !== 'snapshot') throw new Error('not a snapshot');
  const groups = buildGroups(parsed.records, parsed.prompts);
  breakdownStats(groups);
  viewGroups(groups, NO_FILTER, 'index').slice(0, 40);
  return performance.now() - t0;
}

async function openIteration(): Promise<Record<string, number[]>> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'tinker-bench-breakdown-'));
  const out: Record<string, number[]> = {};
  const put = (name: string, ms: number) => (out[name] ??= []).push(ms);
  try {
    const file = samplesFile(dir, 0, { kind: 'train' });
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, fileText);
    for (let rep = 0; rep < REPS; rep++) {
      let t0 = performance.now();
      const read = parseSamples(await fs.readFile(file, 'utf8'), file);
      put('before: whole-file read, then first paint', performance.now() - t0 + paint(read.records));
      t0 = performance.now();
      let firstGroups = 0;
      const all = await readSamplesInChunks(dir, 0, { kind: 'train' }, (first) => {
        put('after: chunked read, first groups painted', performance.now() - t0 + paint(first.records));
        firstGroups = new Set(first.records.map((r) => r.group_idx)).size;
      });
      put('after: complete snapshot painted', performance.now() - t0 + paint(all?.records ?? []));
      put(`after: groups in the first paint`, firstGroups);
    }
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
  return out;
}

console.log(`group breakdown data work, ${GROUPS} groups × ${GROUP_SIZE} samples × ${TOKENS} tokens (${REPS} reps, median; filter: max over changes of the last rep)`);
console.log(`  snapshot payload ${(payloadBytes / 2 ** 20).toFixed(1)} MiB of JSON`);
let firstPaint = 0;
for (const [name, xs] of Object.entries(phases)) {
  const v = name.startsWith('filter') ? Math.max(...xs.slice(-xs.length / REPS)) : median(xs);
  if (!name.startsWith('filter')) firstPaint += v;
  console.log(`  ${name.padEnd(64)} ${v.toFixed(1).padStart(8)} ms`);
}
console.log(`  ${'to first paint (sum of the above but filters, before layout)'.padEnd(64)} ${firstPaint.toFixed(1).padStart(8)} ms`);
console.log('  apart from first paint:');
for (const [name, xs] of Object.entries(apart)) console.log(`  ${name.padEnd(64)} ${median(xs).toFixed(1).padStart(8)} ms`);
void openIteration().then((opened) => {
  console.log('  open iteration (host read from disk included) to first paint:');
  for (const [name, xs] of Object.entries(opened)) console.log(`  ${name.padEnd(64)} ${median(xs).toFixed(name.includes('groups in') ? 0 : 1).padStart(8)}${name.includes('groups in') ? '' : ' ms'}`);
});
