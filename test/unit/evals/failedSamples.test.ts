// Samples the grader or environment failed on, on the embedded engine with real Python: the CLI's
// table counts them and shows the first error at its file:line, an eval where every sample failed
// exits non-zero (the agent's evaluate answers an error), and the eval panel's snapshot counts them too.
import * as assert from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { AGENT_TOOLS } from '../../../src/core/agent/tools';
import { TrainingSession } from '../../../src/core/agent/session';
import { readEvalResults } from '../../../src/core/evals/results';
import { readEvalSnapshot } from '../../../src/core/evals/resultsView';
import { runEval } from '../../../src/core/evals/runEval';
import { formatEvalTable } from '../../../src/core/evals/table';
import { ARITH_CHAT_MODEL } from '../../../src/engine/model/models';
import { startCountingEngine } from './engineFixture';

const CLI = path.join(__dirname, '../../../src/cli/main.js');
const EXAMPLE = path.resolve(__dirname, '../../../../examples/arithmetic');
const RETRY = path.resolve(__dirname, '../../../../examples/arith-retry');

/** Raises on line 3 for every sample. */
const BROKEN = 'def compute_reward(completion, ground_truth):\n    answer = completion.strip()\n    return float(answer == ground_turth)\n';
/** Raises (line 4) when the answer is even; grades the others as the example does. */
const HALF = 'def compute_reward(completion, ground_truth):\n    answer = completion.strip()\n    if int(ground_truth) % 2 == 0:\n        raise ValueError("even answers are not graded")\n    return float(answer == ground_truth)\n';

describe('an eval whose grader or environment fails', function () {
  this.timeout(300_000);
  let dir: string;
  const env = () => ({ ...process.env, TINKER_API_KEY: '', TINKER_STUDIO_CACHE_DIR: path.join(dir, 'cache') });

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-evalfail-'));
    fs.mkdirSync(path.join(dir, 'graders'));
    fs.copyFileSync(path.join(EXAMPLE, 'holdout.jsonl'), path.join(dir, 'holdout.jsonl'));
    fs.writeFileSync(path.join(dir, 'graders', 'broken.py'), BROKEN);
    fs.writeFileSync(path.join(dir, 'graders', 'half.py'), HALF);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const spec = (name: string, grader: string) => {
    fs.writeFileSync(path.join(dir, `${name}.eval.json`), JSON.stringify({ dataset: { path: 'holdout.jsonl', max_problems: 8 }, grader: { file: grader }, n: 2, max_tokens: 6, seed: 3, targets: ['tinker-studio/arith-gpt'] }));
    return `${name}.eval.json`;
  };

  it('every sample failed: the CLI counts them in the table, shows the first error at its file:line and exits non-zero; the panel counts them', async () => {
    const r = spawnSync(process.execPath, [CLI, 'eval', spec('broken', 'graders/broken.py')], { cwd: dir, env: env(), encoding: 'utf8' });
    assert.strictEqual(r.status, 1, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /target\s+problems\s+failed\s+reward/);
    assert.match(r.stdout, /tinker-studio\/arith-gpt \(baseline\)\s+8\s+16\/16\s+0\.000/);
    assert.match(r.stdout, /tinker-studio\/arith-gpt: 16 of 16 samples failed in the grader and scored 0; first \(holdout\.jsonl:\d+, sample \d\): graders\/broken\.py:3: \w+: .*ground_turth/);
    assert.match(r.stderr, /every sample \(16 of 16\) failed in the grader: the figures measure nothing; first \(holdout\.jsonl:\d+\): graders\/broken\.py:3/);
    const snap = await readEvalSnapshot(path.join(dir, 'evals', 'broken'));
    assert.deepStrictEqual(snap.targets.map((t) => [t.samples, t.failed]), [[16, 16]]);
    assert.match(snap.notes.join(' '), /16 of 16 samples failed in the grader .*graders\/broken\.py:3/);
  });

  it('some samples failed: counted, the first shown, the eval exits 0', () => {
    const r = spawnSync(process.execPath, [CLI, 'eval', spec('half', 'graders/half.py')], { cwd: dir, env: env(), encoding: 'utf8' });
    assert.strictEqual(r.status, 0, `${r.stdout}\n${r.stderr}`);
    const s = readEvalResults(path.join(dir, 'evals', 'half')).summary;
    const even = s.problems.filter((p) => Number(p.ground_truth) % 2 === 0).length;
    assert.ok(even > 0 && even < 8, `the first 8 problems mix even and odd answers (${even} even)`);
    assert.strictEqual(s.targets[0]!.reward_errors, 2 * even);
    assert.match(r.stdout, new RegExp(`\\(baseline\\)\\s+8\\s+${2 * even}/16\\s`));
    assert.match(r.stdout, new RegExp(`${2 * even} of 16 samples failed in the grader and scored 0; first \\(holdout\\.jsonl:\\d+, sample \\d\\): graders/half\\.py:4: \\w+: .*even answers are not graded`));
    assert.doesNotMatch(r.stderr, /every sample/);
  });

  it("the agent's evaluate answers an error when every sample failed", async () => {
    const engine = await startCountingEngine('tinker-evalfail-agent-');
    const session = new TrainingSession({ runsDir: path.join(dir, 'runs'), cacheDir: engine.cacheDir(), baseDir: dir, connect: () => engine.connect(), idleMs: 0 });
    try {
      const evaluate = AGENT_TOOLS.find((t) => t.name === 'evaluate')!;
      await assert.rejects(
        evaluate.run(session, { targets: ['tinker-studio/arith-gpt'], dataset: 'holdout.jsonl', grader: 'graders/broken.py', n: 1, max_problems: 4, max_tokens: 6 }),
        (e: Error) => /^evaluate: every sample \(4 of 4\) failed in the grader/.test(e.message) && /broken\.py:3: \w+: .*ground_turth/.test(e.message) && /4\/4/.test(e.message),
      );
    } finally {
      await session.close('test over');
      await engine.close();
    }
  });

  it('an environment that fails on every episode: counted, its file:line shown, said to be the environment', async () => {
    const engine = await startCountingEngine('tinker-evalfail-env-');
    try {
      const d = path.join(engine.dir, 'env');
      fs.mkdirSync(d);
      fs.copyFileSync(path.join(RETRY, 'holdout.jsonl'), path.join(d, 'holdout.jsonl'));
      const source = fs.readFileSync(path.join(RETRY, 'arith_retry.env.py'), 'utf8');
      // the example's environment with a step that raises at once
      const broken = source.replace(/(\n(\s+)def step\(self, [^)]*\)[^:]*:\n)/, '$1$2    raise RuntimeError("step is broken")\n');
      assert.notStrictEqual(broken, source, 'the example has a step method');
      fs.writeFileSync(path.join(d, 'broken.env.py'), broken);
      const line = broken.split('\n').findIndex((l) => l.includes('step is broken')) + 1;
      const file = path.join(d, 'broken.eval.json');
      fs.writeFileSync(file, JSON.stringify({ dataset: { path: 'holdout.jsonl', max_problems: 2 }, env: { file: 'broken.env.py' }, n: 1, max_tokens: 16, model: ARITH_CHAT_MODEL, targets: [ARITH_CHAT_MODEL] }));
      const s = await runEval({ specFile: file, connect: () => engine.connect(), cacheDir: engine.cacheDir() });
      assert.strictEqual(s.targets[0]!.reward_errors, 2);
      const table = formatEvalTable(s);
      assert.match(table, new RegExp(`2 of 2 samples failed in the environment and scored 0; first \\(holdout\\.jsonl:\\d+, sample 0\\): broken\\.env\\.py:${line}: \\w+: .*step is broken`), table);
    } finally {
      await engine.close();
    }
  });
});
