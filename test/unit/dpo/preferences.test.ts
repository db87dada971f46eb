// The playground's preferences land in the pairs file as pairs a DPO run reads, with their provenance;
// and the pairs panel's reader gets a run's margins (first and latest) from iteration_*/pairs.jsonl.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { appendPreference } from '../../../src/core/playground/preferences';
import { readPairsFile } from '../../../src/core/dpo/pairs';
import { pairsOfRun, readPairRows, readRunMargins } from '../../../src/core/dpo/pairsView';

describe('preferences file and the pairs view', () => {
  let tmp: string;
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-prefs-'))));
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('appends pairs (creating the folder, mending a missing final newline) that read back with their provenance', async () => {
    const file = path.join(tmp, 'sub', 'preferences.jsonl');
    const source = { tool: 'playground' as const, chosen: { side: 'B' as const, model: 'tinker://x/sampler', sample: 1, reward: 1 }, rejected: { side: 'A' as const, model: 'tinker-studio/arith-gpt', sample: 0 }, sampling: { temperature: 1, n: 4 }, run: 'r1', time: '2026-11-27T00:00:00.000Z' };
    const a = await appendPreference(file, { prompt: [{ role: 'user', content: 'What is 2 + 3?' }], chosen: '5', rejected: '6', source });
    assert.deepStrictEqual(a, { line: 1, pairs: 1 });
    fs.appendFileSync(file, '{"prompt": "x", "chosen": "a"}'); // a bad line without a final newline
    const b = await appendPreference(file, { prompt: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }], chosen: 'hello', rejected: 'go away', source });
    assert.deepStrictEqual(b, { line: 3, pairs: 2 });
    const read = await readPairsFile(file, 'preferences.jsonl', 'skip');
    assert.strictEqual(read.pairs.length, 2);
    assert.strictEqual(read.skipped.length, 1);
    assert.deepStrictEqual(read.pairs[0]!.chosen, [{ role: 'assistant', content: '5' }]);
    assert.deepStrictEqual(read.pairs[1]!.prompt, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }]);
    assert.deepStrictEqual(read.pairs[0]!.meta?.source, source);
    const rows = await readPairRows(file, 'preferences.jsonl');
    assert.deepStrictEqual(rows.rows.map((r) => [r.id, r.prompt, r.chosen, r.rejected]), [['preferences.jsonl:1', 'What is 2 + 3?', '5', '6'], ['preferences.jsonl:3', '[system] Be brief.\n[user] hi', 'hello', 'go away']]);
  });

  it('reads a DPO run: its pairs file through config.json, margins first and latest per pair', () => {
    const run = path.join(tmp, 'run');
    fs.mkdirSync(path.join(run, 'iteration_000000'), { recursive: true });
    fs.mkdirSync(path.join(run, 'iteration_000001'), { recursive: true });
    fs.writeFileSync(path.join(run, 'config.json'), JSON.stringify({ run_kind: 'dpo', dpo_beta: 0.1, spec_file: path.join(tmp, 'a.dpo.json'), dataset: { path: 'pairs.jsonl' } }));
    fs.writeFileSync(path.join(run, 'iteration_000000', 'pairs.jsonl'), ['{"pair":"pairs.jsonl:1","split":"train","margin":0}', '{"pair":"pairs.jsonl:2","split":"validation","margin":0}', 'not json'].join('\n') + '\n');
    fs.writeFileSync(path.join(run, 'iteration_000001', 'pairs.jsonl'), '{"pair":"pairs.jsonl:1","split":"train","margin":-0.25}\n');
    assert.deepStrictEqual(pairsOfRun(run), { pairsFile: path.join(tmp, 'pairs.jsonl'), label: 'pairs.jsonl', beta: 0.1 });
    const all = readRunMargins(run);
    assert.strictEqual(all.nextStep, 2);
    assert.deepStrictEqual(all.updates.find((u) => u.id === 'pairs.jsonl:1'), { id: 'pairs.jsonl:1', split: 'train', start: 0, now: -0.25, step: 1 });
    assert.deepStrictEqual(readRunMargins(run, 1).updates.map((u) => u.id), ['pairs.jsonl:1']);
    fs.writeFileSync(path.join(run, 'config.json'), JSON.stringify({ run_kind: 'sft', dataset: { path: 'x' } }));
    assert.throws(() => pairsOfRun(run), /is not a DPO run/);
  });
});
