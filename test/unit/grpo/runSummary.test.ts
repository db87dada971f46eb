// The table the CLI prints at the end of a GRPO run says what ran: real runs on the embedded engine
// (random-gpt, the real Python reward), read back by summaryTable. A spec whose only evaluation is an
// inline evaluator shows that evaluator's figures (not "no holdout evaluation ran"), and a
// distillation run without a reward shows the KL to the teacher (not a train reward of 0.000 → 0.000).
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { summaryTable } from '../../../src/core/grpo/summary';
import { startGrpoRun } from '../../../src/core/grpo/start';
import { ServiceClient } from '../../../src/core/tinker/client';
import { TestEngine, readMetricsLines, startTestEngine, writeReward } from './engineFixture';

const BASE = { model: 'tinker-studio/random-gpt', lora_rank: 4, learning_rate: 0.002, max_tokens: 4, iterations: 3, groups_per_batch: 2, group_size: 2, save_every: 0, eval_every: 0 };

describe('the end-of-run summary of a GRPO run', function () {
  this.timeout(300_000);
  let dir: string;
  let engine: TestEngine;
  const connect = () => ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-run-summary-'));
    engine = await startTestEngine(dir);
    fs.writeFileSync(path.join(dir, 'train.jsonl'), '{"question":"What is 1 + 1?","answer":2}\n{"question":"What is 2 + 2?","answer":4}\n{"question":"What is 3 + 3?","answer":6}\n');
    fs.writeFileSync(path.join(dir, 'prompts.jsonl'), '{"question":"Say hi"}\n{"question":"Count"}\n{"question":"Add"}\n');
    writeReward(dir);
  });
  after(async () => {
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const run = async (name: string, spec: Record<string, unknown>) => {
    const specFile = path.join(dir, `${name}.grpo.json`);
    fs.writeFileSync(specFile, JSON.stringify({ ...BASE, ...spec }));
    const r = await startGrpoRun({ specFile, runsDir: path.join(dir, `runs-${name}`), connect, cacheDir: path.join(dir, 'cache') });
    assert.strictEqual(r.status, 'completed', r.error);
    return r.runDir;
  };

  it("an inline evaluator's figures, first and last, instead of \"no holdout evaluation ran\"", async () => {
    const runDir = await run('inline', { dataset: { path: 'train.jsonl' }, reward: { file: 'reward.py' }, evals: [{ name: 'holdout', dataset: { path: 'train.jsonl' }, every: 2, n: 2 }] });
    const rows = readMetricsLines(runDir);
    const evalSteps = rows.filter((m) => typeof m['test/holdout/env/all/reward/total'] === 'number').map((m) => m.step);
    assert.deepStrictEqual(evalSteps, [0, 2], 'the inline evaluator ran at steps 0 and 2');
    const at = (step: number, key: string) => (rows.find((m) => m.step === step)![key] as number).toFixed(3);
    const table = summaryTable(runDir);
    assert.doesNotMatch(table, /no holdout evaluation ran/, table);
    assert.match(table, new RegExp(`holdout reward \\(inline evaluator\\)\\s+${at(0, 'test/holdout/env/all/reward/total')} \\(step 0\\)\\s+${at(2, 'test/holdout/env/all/reward/total')} \\(step 2\\)`), table);
    assert.match(table, new RegExp(`holdout pass@2\\s+${at(0, 'test/holdout/env/all/pass@2')} \\(step 0\\)\\s+${at(2, 'test/holdout/env/all/pass@2')} \\(step 2\\)`), table);
    assert.match(table, /train reward \(env\/all\/reward\/total\)/);

    const none = await run('none', { dataset: { path: 'train.jsonl' }, reward: { file: 'reward.py' } });
    assert.match(summaryTable(none), /no holdout evaluation ran/, 'a run with no evaluation at all still says so');
  });

  it('a distillation run without a reward: the KL to the teacher, first and last, and no train reward', async () => {
    const runDir = await run('distill', { dataset: { path: 'prompts.jsonl' }, teacher: { model: BASE.model }, group_size: 1 });
    const rows = readMetricsLines(runDir);
    const kl = rows.map((m) => m.teacher_kl as number);
    assert.ok(kl.every((v) => typeof v === 'number'), 'every step logs teacher_kl');
    const table = summaryTable(runDir);
    assert.doesNotMatch(table, /train reward/, table);
    assert.match(table, new RegExp(`KL to the teacher \\(teacher_kl, per token\\)\\s+${kl[0]!.toFixed(3)} \\(step 0\\)\\s+${kl[2]!.toFixed(3)} \\(step 2\\)`), table);
  });
});
