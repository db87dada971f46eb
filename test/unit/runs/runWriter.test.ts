// The run-directory writer: the cookbook layout, whole-line appends, atomic whole files, and what a
// resume reads back (the last state checkpoint) after a crash left a partial line.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Redactor } from '../../../src/core/config/redact';
import { parseJsonl } from '../../../src/core/runs/jsonl';
import { MetricsRecord, mergeMetrics, parseRecords, summarizeRun } from '../../../src/core/runs/runDirectory';
import { RunWriter, dropPartialTail, iterationDirName, orderCheckpointRecord, runDirName } from '../../../src/core/runs/runWriter';

describe('run directory writer', () => {
  let root: string;
  beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-runwriter-'))));
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('names run directories <name>-YYYYMMDD-HHMMSS (UTC) and iteration folders iteration_NNNNNN', () => {
    assert.strictEqual(runDirName('arith', new Date(Date.UTC(2026, 10, 2, 3, 4, 5))), 'arith-20261102-030405');
    assert.strictEqual(runDirName('a b/c', new Date(Date.UTC(2026, 0, 1))), 'a_b_c-20260101-000000');
    assert.strictEqual(iterationDirName(7), 'iteration_000007');
    assert.strictEqual(iterationDirName(123456), 'iteration_123456');
  });

  it('never reuses an existing directory: a second run in the same second gets a suffix', () => {
    const at = new Date(Date.UTC(2026, 0, 1, 12));
    const a = RunWriter.create(root, 'x', at);
    const b = RunWriter.create(root, 'x', at);
    assert.notStrictEqual(a.dir, b.dir);
    assert.strictEqual(path.basename(b.dir), 'x-20260101-120000-2');
  });

  it('writes config.json pretty-printed, metrics lines {"step": i, ...} and reads like a cookbook run', async () => {
    const w = RunWriter.create(root, 'run');
    w.writeConfig({ model_name: 'tinker-studio/arith-gpt', learning_rate: 0.003 });
    w.appendMetrics(0, { 'progress/batch': 0, 'env/all/reward/total': 0.25 });
    w.appendMetrics(1, { 'progress/batch': 1, 'env/all/reward/total': 0.5, 'optim/kl_sample_train_v1': NaN });
    const text = fs.readFileSync(path.join(w.dir, 'metrics.jsonl'), 'utf8');
    const lines = text.split('\n');
    assert.strictEqual(lines.length, 3, 'two whole lines and the empty tail');
    assert.ok(lines[0]!.startsWith('{"step":0,'), 'step comes first');
    assert.ok(lines[1]!.includes('NaN'), 'NaN written the way Python writes it');
    assert.strictEqual(fs.readFileSync(path.join(w.dir, 'config.json'), 'utf8'), '{\n  "model_name": "tinker-studio/arith-gpt",\n  "learning_rate": 0.003\n}\n');
    const s = await summarizeRun(w.dir);
    assert.strictEqual(s.model, 'tinker-studio/arith-gpt');
    assert.strictEqual(s.steps, 2);
    assert.strictEqual(s.lastReward, 0.5);
    assert.deepStrictEqual(s.problems, []);
  });

  it('writes checkpoint records in the cookbook key order, extras last, absent fields omitted', () => {
    const w = RunWriter.create(root, 'run');
    w.appendCheckpoint({ sampler_path: 'tinker://r/sampler_weights/000002', extra: 1, state_path: 'tinker://r/weights/000002', batch: 2, name: '000002' });
    w.appendCheckpoint({ name: 'final', batch: 4, state_path: 'tinker://r/weights/final', sampler_path: undefined });
    const lines = fs.readFileSync(path.join(w.dir, 'checkpoints.jsonl'), 'utf8').trimEnd().split('\n');
    assert.strictEqual(lines[0], '{"name":"000002","batch":2,"state_path":"tinker://r/weights/000002","sampler_path":"tinker://r/sampler_weights/000002","extra":1}');
    assert.strictEqual(lines[1], '{"name":"final","batch":4,"state_path":"tinker://r/weights/final"}');
    assert.deepStrictEqual(Object.keys(orderCheckpointRecord({ epoch: 0, final: true, name: 'n' })), ['name', 'epoch', 'final']);
  });

  it('finds the last record with a state_path for resume (sampler-only records do not count)', () => {
    const w = RunWriter.create(root, 'run');
    w.writeConfig({});
    assert.strictEqual(w.lastStateCheckpoint(), undefined);
    w.appendCheckpoint({ name: '000002', batch: 2, state_path: 'tinker://r/weights/000002' });
    w.appendCheckpoint({ name: '000004', batch: 4, state_path: 'tinker://r/weights/000004', sampler_path: 'tinker://r/sampler_weights/000004' });
    w.appendCheckpoint({ name: 'sampler-only', sampler_path: 'tinker://r/sampler_weights/x' });
    w.close();
    assert.strictEqual(RunWriter.open(w.dir).lastStateCheckpoint()?.name, '000004');
  });

  it('on resume cuts off a partial last line left by a crash, so the next record is a line of its own', () => {
    const w = RunWriter.create(root, 'run');
    w.writeConfig({});
    w.appendMetrics(0, { a: 1 });
    fs.appendFileSync(path.join(w.dir, 'metrics.jsonl'), '{"step":1,"a":');
    const before = parseJsonl(fs.readFileSync(path.join(w.dir, 'metrics.jsonl'), 'utf8'), 'metrics.jsonl');
    assert.ok(before.partialTail, 'the reader sees a partial tail and skips it');
    w.close();
    const again = RunWriter.open(w.dir);
    again.appendMetrics(1, { a: 2 });
    const file = path.join(w.dir, 'metrics.jsonl');
    const { records, problems } = parseRecords(fs.readFileSync(file, 'utf8'), file, MetricsRecord);
    assert.deepStrictEqual(problems, []);
    assert.deepStrictEqual(records, [{ step: 0, a: 1 }, { step: 1, a: 2 }]);
  });

  it('dropPartialTail leaves complete files and missing files alone', () => {
    const f = path.join(root, 'x.jsonl');
    dropPartialTail(f);
    assert.ok(!fs.existsSync(f));
    fs.writeFileSync(f, '{"a":1}\n');
    dropPartialTail(f);
    assert.strictEqual(fs.readFileSync(f, 'utf8'), '{"a":1}\n');
    fs.writeFileSync(f, '{"a":1}\n{"b"');
    dropPartialTail(f);
    assert.strictEqual(fs.readFileSync(f, 'utf8'), '{"a":1}\n');
  });

  it('a resumed run re-logging a step supersedes the earlier line when merged (later wins)', () => {
    const w = RunWriter.create(root, 'run');
    w.appendMetrics(0, { r: 0.1 });
    w.appendMetrics(1, { r: 0.2 });
    w.appendMetrics(1, { r: 0.3 });
    const file = path.join(w.dir, 'metrics.jsonl');
    const merged = mergeMetrics(parseRecords(fs.readFileSync(file, 'utf8'), file, MetricsRecord).records);
    assert.deepStrictEqual(merged, [{ step: 0, r: 0.1 }, { step: 1, r: 0.3 }]);
  });

  it('(over)writes iteration files whole, leaving no temp files behind', () => {
    const w = RunWriter.create(root, 'run');
    w.writeIterationFile(3, 'train_rollout_summaries.jsonl', [{ a: 1 }, { a: 2 }]);
    w.writeIterationFile(3, 'train_rollout_summaries.jsonl', [{ a: 3 }]);
    const dir = path.join(w.dir, 'iteration_000003');
    assert.deepStrictEqual(fs.readdirSync(dir), ['train_rollout_summaries.jsonl']);
    assert.strictEqual(fs.readFileSync(path.join(dir, 'train_rollout_summaries.jsonl'), 'utf8'), '{"a":3}\n');
  });

  it('writes an iteration file a slice at a time with the same content as all at once', async () => {
    const w = RunWriter.create(root, 'run');
    const items = Array.from({ length: 10 }, (_, i) => ({ i, nan: i === 4 ? NaN : i / 3 }));
    w.writeIterationFile(2, 'whole.jsonl', items);
    const asked: Array<[number, number]> = [];
    await w.writeIterationFileInSlices(2, 'sliced.jsonl', items.length, (a, b) => (asked.push([a, b]), items.slice(a, b)), 4);
    assert.deepStrictEqual(asked, [[0, 4], [4, 8], [8, 10]]);
    const dir = path.join(w.dir, 'iteration_000002');
    assert.strictEqual(fs.readFileSync(path.join(dir, 'sliced.jsonl'), 'utf8'), fs.readFileSync(path.join(dir, 'whole.jsonl'), 'utf8'));
    assert.deepStrictEqual(fs.readdirSync(dir).sort(), ['sliced.jsonl', 'whole.jsonl'], 'no temp file left');
    await w.writeIterationFileInSlices(2, 'sliced.jsonl', 1, () => [{ again: true }], 4);
    assert.strictEqual(fs.readFileSync(path.join(dir, 'sliced.jsonl'), 'utf8'), '{"again":true}\n', 'overwritten whole');
  });

  it('refuses to open a folder that is not a run directory', () => {
    assert.throws(() => RunWriter.open(root), /not a run directory \(no config\.json\)/);
  });

  it('redacts secrets in logs.log', () => {
    const w = RunWriter.create(root, 'log');
    w.appendLog('request failed: x-api-key tml-abcdef0123456789 rejected, jwt eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.sig');
    const custom = new Redactor();
    custom.add('my-own-secret-value');
    w.redactWith(custom);
    w.appendLog('also my-own-secret-value here');
    const text = fs.readFileSync(path.join(w.dir, 'logs.log'), 'utf8');
    assert.doesNotMatch(text, /tml-abcdef|eyJhbGci|my-own-secret-value/);
    assert.match(text, /x-api-key «redacted» rejected/);
  });
});
