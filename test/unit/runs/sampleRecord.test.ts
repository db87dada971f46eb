// The one schema of per-sample records: what the GRPO writer writes (sampleRecords → RunWriter) is
// what readSamples and the reward dry run's reader read back, reward errors included; bad lines are
// named by file and line; config.json is parsed in one place with errors naming file and field.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { sampleRecords } from '../../../src/core/rollouts/records';
import type { RolloutGroup, ScoredRollout } from '../../../src/core/rollouts/rollout';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { getRenderer } from '../../../src/core/render/registry';
import { readRunSamples, runsUsingReward } from '../../../src/core/reward/runSamples';
import { parseRunConfig, readRunConfig, rewardFileOfConfig } from '../../../src/core/runs/runConfig';
import { RunWriter } from '../../../src/core/runs/runWriter';
import { FIRST_READ_BYTES, parseSamples, readSamples, readSamplesInChunks, samplesFile, samplesFileName, SampleRecord, SamplesProgress } from '../../../src/core/runs/sampleRecord';

function group(id: string, completions: Array<{ text: string; reward: number; error?: boolean }>, tok: ByteTokenizer): RolloutGroup<ScoredRollout> {
  return {
    problem: { id, messages: [{ role: 'user', content: `What is ${id}?` }], groundTruth: '4' },
    promptTokens: tok.encode(`user: What is ${id}?\n`),
    rollouts: completions.map((c) => ({
      tokens: tok.encode(c.text),
      logprobs: tok.encode(c.text).map((_, i) => -0.1 * (i + 1)),
      stopReason: 'stop',
      response: { message: { role: 'assistant', content: c.text }, termination: 'eos' },
      reward: c.reward,
      metrics: {},
      ...(c.error ? { rewardError: { kind: 'exception', message: 'ZeroDivisionError: division by zero', traceback: 'File "reward.py", line 7', line: 7 } } : {}),
    })),
  };
}

describe('sample records', () => {
  let root: string;
  beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-samples-'))));
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('round trip: what the writer writes, every reader reads back unchanged (reward errors too)', async () => {
    const tok = new ByteTokenizer();
    const renderer = getRenderer('role_colon', tok);
    const groups = [group('p:1', [{ text: '4', reward: 1 }, { text: '5', reward: 0 }], tok), group('p:2', [{ text: 'x', reward: 0, error: true }, { text: '4', reward: 1 }], tok)];
    const written = sampleRecords(renderer, groups, [[0.5, -0.5], [-0.5, 0.5]]);
    const writer = RunWriter.create(root, 'rt');
    writer.writeConfig({ model_name: 'm', reward: { file: 'reward.py' }, spec_file: path.join(root, 'spec', 'a.grpo.json') });
    writer.writeIterationFile(0, samplesFileName({ kind: 'train' }), written);
    writer.writeIterationFile(0, samplesFileName({ kind: 'eval', name: 'test' }), written.slice(0, 2));

    const train = await readSamples(writer.dir, 0, { kind: 'train' });
    assert.ok(train);
    assert.deepStrictEqual(train.problems, []);
    assert.deepStrictEqual(train.records, written);
    assert.deepStrictEqual(train.records[2]!.reward_error, { kind: 'exception', message: 'ZeroDivisionError: division by zero', traceback: 'File "reward.py", line 7', line: 7 });
    const evalRead = await readSamples(writer.dir, 0, { kind: 'eval', name: 'test' });
    assert.strictEqual(evalRead?.records.length, 2);
    assert.strictEqual(await readSamples(writer.dir, 1, { kind: 'train' }), undefined, 'an iteration without samples');

    const run = await readRunSamples(writer.dir);
    assert.deepStrictEqual(run.iterations, [0]);
    assert.deepStrictEqual(run.groups.map((g) => [g.problemId, g.samples.map((s) => s.content)]), [['p:1', ['4', '5']], ['p:2', ['x', '4']]]);
    assert.deepStrictEqual(await runsUsingReward(root, path.join(root, 'spec', 'reward.py')), [writer.dir]);
  });

  it('a line that is not a sample record is reported with its file, line and field; the others are kept', async () => {
    const writer = RunWriter.create(root, 'bad');
    writer.writeConfig({});
    const good: SampleRecord = { group_idx: 0, traj_idx: 0, problem_id: 'p', prompt: 'q', completion: 'a', content: 'a', ground_truth: 'a', completion_tokens: [97], logprobs: [-0.5], reward: 1, advantage: 0, stop_reason: 'stop', termination: 'eos' };
    writer.writeIterationFile(3, 'train_samples.jsonl', [good, { ...good, traj_idx: 1, reward: 'high' }]);
    const read = await readSamples(writer.dir, 3, { kind: 'train' });
    assert.ok(read);
    assert.deepStrictEqual(read.records, [good]);
    assert.strictEqual(read.problems.length, 1);
    assert.strictEqual(read.problems[0]!.line, 2);
    assert.match(read.problems[0]!.message, /reward/);
    assert.ok(read.problems[0]!.file.endsWith(path.join('iteration_000003', 'train_samples.jsonl')));
  });

  it('read in chunks: the first complete groups come first, then exactly what parseSamples reads (bad lines, non-ASCII, a partial tail)', async () => {
    const writer = RunWriter.create(root, 'big');
    writer.writeConfig({});
    // multi-byte characters make chunk boundaries fall inside a character
    const long = 'é→😀 '.repeat(2000);
    const lines: string[] = [];
    for (let g = 0; lines.join('\n').length < 2.5 * FIRST_READ_BYTES; g++) {
      for (let t = 0; t < 4; t++) {
        const r: SampleRecord = { group_idx: g, traj_idx: t, problem_id: `p:${g}`, prompt: 'q', completion: long, content: 'a', ground_truth: 'a', completion_tokens: [1, 2], logprobs: [-0.5, -0.1], reward: t % 2, advantage: 0, stop_reason: 'stop', termination: 'eos' };
        lines.push(JSON.stringify(r));
      }
    }
    const badAt = lines.length - 3;
    lines[badAt] = JSON.stringify({ group_idx: 0, traj_idx: 9, completion_tokens: [1.5] });
    const text = `${lines.join('\n')}\n{"group_idx": 7, "traj`;
    const file = samplesFile(writer.dir, 2, { kind: 'train' });
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);

    const firsts: SamplesProgress[] = [];
    const read = await readSamplesInChunks(writer.dir, 2, { kind: 'train' }, (f) => firsts.push(f));
    const whole = parseSamples(text, file);
    assert.ok(read);
    assert.deepStrictEqual(read, whole);
    assert.strictEqual(whole.problems.length, 1);
    assert.strictEqual(read.problems[0]!.line, badAt + 1);
    assert.strictEqual(firsts.length, 1, 'one early snapshot');
    const first = firsts[0]!;
    assert.strictEqual(first.bytesTotal, Buffer.byteLength(text));
    assert.ok(first.bytesRead < first.bytesTotal);
    assert.ok(first.records.length > 0);
    // only whole groups, each exactly as the whole read has it
    const groupsShown = new Set(first.records.map((r) => r.group_idx));
    assert.deepStrictEqual(first.records, whole.records.filter((r) => groupsShown.has(r.group_idx)));

    const small: SamplesProgress[] = [];
    writer.writeIterationFile(3, 'train_samples.jsonl', whole.records.slice(0, 2));
    const smallRead = await readSamplesInChunks(writer.dir, 3, { kind: 'train' }, (f) => small.push(f));
    assert.deepStrictEqual(smallRead?.records, whole.records.slice(0, 2));
    assert.strictEqual(small.length, 0, 'a file read in one chunk has no early snapshot');
    assert.strictEqual(await readSamplesInChunks(writer.dir, 4, { kind: 'train' }, () => assert.fail('no file')), undefined);
  });

  it('config.json: ours and the cookbook’s parse; a wrong field or bad JSON names the file and field; no file is undefined', async () => {
    assert.strictEqual(parseRunConfig('{"model_name": "Qwen/Qwen3-8B", "log_path": "/tmp/x", "learning_rate": 4e-5}', 'c.json').model_name, 'Qwen/Qwen3-8B');
    const ours = parseRunConfig(JSON.stringify({ model_name: 'm', spec_file: '/w/a.grpo.json', reward: { file: 'r/reward.py', kind: 'python' }, backend: 'cloud' }), 'c.json');
    assert.strictEqual(rewardFileOfConfig(ours, '/runs/x'), path.resolve('/w/r/reward.py'));
    assert.strictEqual(ours.backend, 'cloud');
    assert.throws(() => parseRunConfig('{"backend": "mars"}', '/runs/x/config.json'), /\/runs\/x\/config\.json: backend: /);
    assert.throws(() => parseRunConfig('{"model_name": ', '/runs/x/config.json'), /\/runs\/x\/config\.json: not JSON/);
    assert.strictEqual(await readRunConfig(root), undefined);
  });
});
