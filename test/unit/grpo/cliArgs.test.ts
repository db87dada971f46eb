// The CLI's argument parsing and its end-of-run table, without starting anything.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { UsageError, parseArgs } from '../../../src/cli/args';
import { summaryTable } from '../../../src/core/grpo/summary';
import { RunWriter } from '../../../src/core/runs/runWriter';

describe('tinker-studio CLI arguments', () => {
  it('sweep: one sweep file, --runs-dir, --max-concurrent (a whole number ≥ 1), --backend', () => {
    assert.deepStrictEqual(parseArgs(['sweep', 'a.sweep.json', '--runs-dir', 'r', '--max-concurrent', '3', '--backend', 'local']), { command: 'sweep', file: 'a.sweep.json', runsDir: 'r', backend: 'local', maxConcurrent: 3 });
    assert.throws(() => parseArgs(['sweep']), (e: Error) => e instanceof UsageError && /sweep file/.test(e.message));
    assert.throws(() => parseArgs(['sweep', 'a.sweep.json', '--max-concurrent', '0']), (e: Error) => e instanceof UsageError && /--max-concurrent/.test(e.message));
    assert.throws(() => parseArgs(['sweep', 'a.sweep.json', 'b.sweep.json']), UsageError);
  });

  it('parses a spec with options, and --resume without a spec', () => {
    assert.deepStrictEqual(parseArgs(['grpo', 'a.grpo.json', '--runs-dir', 'r', '--backend', 'custom', '--base-url', 'http://127.0.0.1:9']), {
      command: 'grpo',
      spec: 'a.grpo.json',
      runsDir: 'r',
      backend: 'custom',
      baseUrl: 'http://127.0.0.1:9',
    });
    assert.deepStrictEqual(parseArgs(['grpo', '--resume', 'runs/x']), { command: 'grpo', resume: 'runs/x' });
    assert.deepStrictEqual(parseArgs(['sft', 'a.sft.json', '--runs-dir', 'r']), { command: 'sft', spec: 'a.sft.json', runsDir: 'r' });
    assert.deepStrictEqual(parseArgs(['sft', '--resume', 'runs/y']), { command: 'sft', resume: 'runs/y' });
    assert.deepStrictEqual(parseArgs(['--help']), { command: 'help' });
    assert.deepStrictEqual(parseArgs([]), { command: 'help' });
  });

  it('rejects what it does not understand, saying what to type', () => {
    assert.throws(() => parseArgs(['train', 'a.json']), (e: unknown) => e instanceof UsageError && /unknown command "train"/.test(e.message));
    assert.throws(() => parseArgs(['grpo']), /give a spec file \(or --resume <run dir>\)/);
    assert.throws(() => parseArgs(['grpo', 'a', '--runs-dir']), /--runs-dir needs a value/);
    assert.throws(() => parseArgs(['grpo', 'a', '--frobnicate']), /unknown option --frobnicate/);
    assert.throws(() => parseArgs(['grpo', 'a', 'b']), /one spec file only/);
    assert.throws(() => parseArgs(['grpo', 'a', '--backend', 'gpu']), /--backend must be local, cloud or custom/);
  });
});

describe('tinker-studio end-of-run table', () => {
  it('shows the holdout metrics of the first and last evaluation and the train reward of the first and last step', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-cli-summary-'));
    try {
      const w = RunWriter.create(root, 'x');
      w.appendMetrics(0, { 'env/all/reward/total': 0.5, 'test/env/all/reward/total': 0.25, 'test/env/all/correct': 0.25, 'test/env/all/format': 1, 'test/env/all/total_episodes': 8 });
      w.appendMetrics(1, { 'env/all/reward/total': 0.625 });
      w.appendMetrics(2, { 'env/all/reward/total': 0.75, 'test/env/all/reward/total': 0.5, 'test/env/all/correct': 0.5, 'test/env/all/format': 1, 'test/env/all/total_episodes': 8 });
      const table = summaryTable(w.dir);
      assert.match(table, /before \(step 0\)\s+after \(step 2\)/);
      assert.match(table, /holdout reward\s+0\.250\s+0\.500/);
      assert.match(table, /8 holdout problems/);
      assert.match(table, /train reward \(env\/all\/reward\/total\)\s+0\.500 \(step 0\)\s+0\.750 \(step 2\)/);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('keeps its columns apart and aligned in a long run, and gives the train reward trend over 5 steps', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-cli-summary-'));
    try {
      const w = RunWriter.create(root, 'x');
      const ev = (v: number) => ({ 'test/env/all/reward/total': v, 'test/env/all/correct': v, 'test/env/all/format': 1, 'test/env/all/total_episodes': 1029 });
      for (let step = 0; step <= 100; step++) w.appendMetrics(step, { 'env/all/reward/total': step < 5 ? 0.25 : step > 95 ? 0.75 : 0.5, ...(step % 100 === 0 ? ev(step === 0 ? 0.667 : 0.936) : {}) });
      const lines = summaryTable(w.dir).split('\n');
      const header = lines.find((l) => l.includes('before (step 0)'))!;
      const holdout = lines.find((l) => l.startsWith('holdout reward'))!;
      const train = lines.find((l) => l.startsWith('train reward'))!;
      const trend = lines.find((l) => l.includes('mean of the first / last 5 steps'))!;
      // "before (step 0)" and "after (step 100)" never run together, and every column ends where its header does
      assert.match(header, /before \(step 0\)\s{2,}after \(step 100\)$/);
      for (const [line, last] of [[holdout, '0.936'], [train, '0.750 (step 100)'], [trend, '0.750']] as const) {
        assert.ok(line.endsWith(last), line);
        assert.strictEqual(line.length, header.length, `${line}\n${header}`);
      }
      assert.match(trend, /0\.250\s+0\.750$/);
      assert.match(lines.join('\n'), /1029 holdout problems/);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
