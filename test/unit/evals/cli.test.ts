// `tinker-studio eval`: its arguments, and a real run of the compiled CLI on a small spec next to a
// copy of the arithmetic example (the embedded engine in the CLI's process), printing the table.
import * as assert from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseArgs } from '../../../src/cli/args';
import { readEvalResults } from '../../../src/core/evals/results';
import { formatEvalStatus, formatEvalTable } from '../../../src/core/evals/table';

const CLI = path.join(__dirname, '../../../src/cli/main.js');
const EXAMPLE = path.resolve(__dirname, '../../../../examples/arithmetic');

describe('tinker-studio eval', function () {
  this.timeout(120_000);

  it('parses the spec, --out, --backend and rejects a missing spec', () => {
    assert.deepStrictEqual(parseArgs(['eval', 'a.eval.json', '--out', 'o', '--backend', 'local']), { command: 'eval', spec: 'a.eval.json', out: 'o', backend: 'local' });
    assert.throws(() => parseArgs(['eval']), /give an eval spec file/);
    assert.throws(() => parseArgs(['eval', 'a', '--resume', 'x']), /unknown option --resume/);
  });

  it('runs a small spec on the embedded engine, prints the table and writes the results folder; a second run resumes with nothing to sample', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-evalcli-'));
    try {
      for (const f of ['holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(EXAMPLE, f), path.join(dir, f));
      fs.writeFileSync(
        path.join(dir, 'small.eval.json'),
        JSON.stringify({ dataset: { path: 'holdout.jsonl', max_problems: 6 }, grader: { file: 'reward.py' }, n: 2, max_tokens: 6, seed: 1, targets: ['tinker-studio/arith-gpt'] }),
      );
      const env = { ...process.env, TINKER_API_KEY: '', TINKER_STUDIO_CACHE_DIR: path.join(dir, 'cache') };
      const r = spawnSync(process.execPath, [CLI, 'eval', 'small.eval.json', '--out', 'res'], { cwd: dir, env, encoding: 'utf8' });
      assert.strictEqual(r.status, 0, r.stderr);
      const res = readEvalResults(path.join(dir, 'res'));
      assert.ok(r.stdout.includes(formatEvalTable(res.summary).split('\n')[0]!), r.stdout);
      assert.match(r.stdout, /tinker-studio\/arith-gpt \(baseline\)\s+6\s+\d\.\d{3} \[/);
      const again = spawnSync(process.execPath, [CLI, 'eval', 'small.eval.json', '--out', 'res'], { cwd: dir, env, encoding: 'utf8' });
      assert.strictEqual(again.status, 0, again.stderr);
      assert.match(again.stderr, /resuming: 12 of 12 samples already/);
      assert.doesNotMatch(again.stderr, /embedded engine on/, 'nothing to sample: no engine started');
      assert.match(formatEvalStatus(res.summary), /pass@2/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
