// Evals graded by an environment (`env` instead of `grader` in *.eval.json) on the embedded engine
// (real HTTP, the real compute backend, tinker-studio/arith-chat, env files in real Python): each
// sample is an episode, its reward the episode's total reward (step rewards plus the group reward),
// pass@k from env.correct_threshold (experiments-reference.md), the transcript kept in the sample
// record; validation and the JSON schema accept it; an interrupted eval resumes with only what is
// missing. Nothing depends on what arith-chat answers: the assertions recompute the statistics from
// the records' own transcripts.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { runEval } from '../../../src/core/evals/runEval';
import { readEvalResults, readTargetSamples } from '../../../src/core/evals/results';
import { evalCorrectThreshold, evalSpecJsonSchema, parseEvalSpecFile } from '../../../src/core/evals/spec';
import { passAtK } from '../../../src/core/evals/stats';
import { gradingField } from '../../../src/core/env/files';
import type { SampleRecord } from '../../../src/protocol/sampleSchema';
import { ARITH_CHAT_MODEL } from '../../../src/engine/model/models';
import { startCountingEngine, type CountingEngine } from './engineFixture';

const RETRY = path.resolve(__dirname, '../../../../examples/arith-retry');

/** One turn; the reward is the reply's length parity; the group reward gives each episode 0.25 more when the group's replies differ. */
const GROUP_ENV = `
class Judged:
    def __init__(self, problem):
        self.p = problem
    def initial_observation(self):
        return [{"role": "user", "content": "What is %d + %d?" % (self.p["x"], self.p["y"])}]
    def step(self, message):
        return {"reward": 1.0 if len(message["content"]) % 2 == 0 else 0.0, "episode_done": True, "metrics": {}}

def compute_group_rewards(problems, transcripts):
    replies = [t[-1]["content"] for t in transcripts]
    bonus = 0.25 if len(set(replies)) > 1 else 0.0
    return [(bonus, {"distinct": float(len(set(replies)))}) for _ in transcripts]
`;

describe('eval graded by an environment (env instead of grader) on the engine', function () {
  this.timeout(300_000);
  let engine: CountingEngine;
  let dir: string;

  before(async () => {
    engine = await startCountingEngine('tinker-env-eval-');
    dir = engine.dir;
  });
  after(async () => {
    await engine?.close();
  });

  const connect = () => engine.connect();
  const cacheDir = () => engine.cacheDir();
  const served = () => engine.served;

  /** The arith-retry example's env and holdout in a fresh folder, with `spec` as holdout.eval.json. */
  function retryCopy(name: string, spec: unknown, extra: Record<string, string> = {}): string {
    const d = path.join(dir, name);
    fs.mkdirSync(d, { recursive: true });
    for (const f of ['holdout.jsonl', 'arith_retry.env.py']) fs.copyFileSync(path.join(RETRY, f), path.join(d, f));
    for (const [f, text] of Object.entries(extra)) fs.writeFileSync(path.join(d, f), text);
    const file = path.join(d, 'holdout.eval.json');
    fs.writeFileSync(file, JSON.stringify(spec));
    return file;
  }

  const stepTotal = (r: SampleRecord) => r.transcript!.turns.reduce((s, t) => s + t.reward, 0) + r.transcript!.group_reward;

  it('scores each sample as an episode of the arith-retry example: its total reward, pass@k from correct_threshold, the transcript kept', async () => {
    const file = retryCopy('retry', {
      dataset: { path: 'holdout.jsonl', max_problems: 6 },
      env: { file: 'arith_retry.env.py', max_turns: 2, correct_threshold: 0.5 },
      n: 3,
      max_tokens: 6,
      seed: 4,
      targets: [ARITH_CHAT_MODEL],
    });
    const { spec } = await parseEvalSpecFile(file);
    assert.strictEqual(spec.grader, undefined);
    assert.strictEqual(spec.env!.file, path.join(path.dirname(file), 'arith_retry.env.py'));
    assert.strictEqual(evalCorrectThreshold(spec), 0.5);
    const summary = await runEval({ specFile: file, connect, cacheDir: cacheDir() });
    const t = summary.targets[0]!;
    const samples = readTargetSamples(path.join(path.dirname(file), 'evals', 'holdout'), t.id);
    assert.strictEqual(samples.length, 18, '6 problems × n = 3');
    for (const r of samples) {
      const turns = r.transcript!.turns;
      assert.ok(turns.length >= 1 && turns.length <= 2, 'max_turns 2');
      assert.match(turns[0]!.new_messages[0]!.content, /^What is \d+ \+ \d+\?$/);
      if (turns.length === 2) assert.strictEqual(turns[1]!.new_messages.at(-1)!.content, 'Wrong, try again.');
      assert.ok(Math.abs(r.reward - stepTotal(r)) < 1e-12, "the sample's reward is the episode's total");
      assert.ok([1, 0.5, 0, -0.1].includes(r.reward), `an arith-retry total: ${r.reward}`);
    }
    assert.ok(Math.abs(t.metrics.reward!.value - samples.reduce((s, r) => s + r.reward, 0) / 18) < 1e-12);
    // pass@k as experiments-reference.md defines it, with correct = total ≥ correct_threshold
    const byProblem = new Map<string, SampleRecord[]>();
    for (const r of samples) byProblem.set(r.problem_id, [...(byProblem.get(r.problem_id) ?? []), r]);
    for (const k of [1, 2, 3]) {
      const want = [...byProblem.values()].reduce((s, recs) => s + passAtK(3, recs.filter((r) => r.reward >= 0.5).length, k), 0) / byProblem.size;
      assert.ok(Math.abs(t.metrics.pass_at![`pass@${k}`]!.value - want) < 1e-12, `pass@${k}`);
    }
    assert.strictEqual(summary.correct_threshold, 0.5);
    assert.ok(summary.complete);
  });

  it('adds the group reward of compute_group_rewards to each episode (the group: the n samples of a problem for one target)', async () => {
    const file = retryCopy('group', { dataset: { path: 'holdout.jsonl', max_problems: 4 }, env: { file: 'judged.env.py', correct_threshold: 1 }, n: 3, max_tokens: 6, seed: 2, targets: [ARITH_CHAT_MODEL] }, { 'judged.env.py': GROUP_ENV });
    const summary = await runEval({ specFile: file, connect, cacheDir: cacheDir() });
    const samples = readTargetSamples(path.join(path.dirname(file), 'evals', 'holdout'), summary.targets[0]!.id);
    assert.strictEqual(samples.length, 12);
    for (const id of new Set(samples.map((r) => r.problem_id))) {
      const group = samples.filter((r) => r.problem_id === id);
      const distinct = new Set(group.map((r) => r.transcript!.turns[0]?.reply.content)).size;
      for (const r of group) {
        if (r.transcript!.stop !== 'completed') continue;
        assert.strictEqual(r.transcript!.group_reward, distinct > 1 ? 0.25 : 0);
        assert.strictEqual(r.transcript!.group_metrics.distinct, distinct);
        assert.ok(Math.abs(r.reward - stepTotal(r)) < 1e-12);
      }
    }
    assert.strictEqual(summary.correct_threshold, 1);
    assert.strictEqual(summary.targets[0]!.metrics.pass_at!['pass@1']!.value, [...new Set(samples.map((r) => r.problem_id))].reduce((s, id) => s + samples.filter((r) => r.problem_id === id && r.reward >= 1).length / 3, 0) / 4);
  });

  it('an interrupted env eval, re-run, runs only the missing episodes; a complete one runs none', async () => {
    const spec = { dataset: { path: 'holdout.jsonl', max_problems: 4 }, env: { file: 'arith_retry.env.py', max_turns: 2 }, n: 2, max_tokens: 6, seed: 9, concurrency: 2, targets: [ARITH_CHAT_MODEL] };
    const file = retryCopy('cut', spec);
    const ac = new AbortController();
    await assert.rejects(runEval({ specFile: file, connect, cacheDir: cacheDir(), signal: ac.signal, onProgress: (p) => p.done >= 2 && ac.abort() }));
    const out = path.join(path.dirname(file), 'evals', 'holdout');
    const partial = readEvalResults(out).summary;
    assert.strictEqual(partial.complete, false);
    const kept = readTargetSamples(out, partial.targets[0]!.id);
    assert.ok(kept.length >= 2 && kept.length < 8, `${kept.length} samples kept`);
    const progress: number[] = [];
    const summary = await runEval({ specFile: file, connect, cacheDir: cacheDir(), onProgress: (p) => progress.push(p.done) });
    assert.strictEqual(progress[0], kept.length, 'resumes from what is there');
    const all = readTargetSamples(out, summary.targets[0]!.id);
    assert.strictEqual(all.length, 8, 'every sample once');
    assert.deepStrictEqual(new Set(all.map((r) => `${r.problem_id}#${r.traj_idx}`)).size, 8);
    for (const r of kept) assert.deepStrictEqual(all.find((x) => x.problem_id === r.problem_id && x.traj_idx === r.traj_idx), r, 'what was there is kept as it was');
    assert.ok(summary.complete);
    const before = served().requests;
    await runEval({ specFile: file, connect, cacheDir: cacheDir() });
    assert.strictEqual(served().requests, before, 'a complete eval samples nothing');
  });

  it('validation and the JSON schema take env instead of grader, exactly one of them', async () => {
    const schema = evalSpecJsonSchema() as { required: string[]; else: unknown; properties: Record<string, { properties?: Record<string, unknown> }> };
    assert.deepStrictEqual([schema.required, (schema.else as { else?: unknown }).else], [['targets'], { required: ['dataset', 'max_tokens'] }]);
    for (const f of ['file', 'class', 'max_turns', 'max_trajectory_tokens', 'failed_parse_reward', 'context_overflow_reward', 'correct_threshold']) assert.ok(schema.properties.env!.properties![f], `env.${f} in the schema`);
    const base = { dataset: { path: 'holdout.jsonl' }, max_tokens: 6, targets: [ARITH_CHAT_MODEL] };
    await assert.rejects(parseEvalSpecFile(retryCopy('neither', base)), /holdout\.eval\.json: grader: required: a reward file to grade with, or an environment \("env"\) instead/);
    fs.writeFileSync(path.join(dir, 'neither', 'reward.py'), 'def compute_reward(c, g):\n    return 0.0\n');
    await assert.rejects(parseEvalSpecFile(retryCopy('neither', { ...base, grader: { file: 'reward.py' }, env: { file: 'arith_retry.env.py' } })), /holdout\.eval\.json: env: give "grader" or "env", not both/);
    await assert.rejects(parseEvalSpecFile(retryCopy('neither', { ...base, env: { file: 'arith_retry.py' } })), /holdout\.eval\.json: env\.file: must be an environment file/);
    await assert.rejects(parseEvalSpecFile(retryCopy('neither', { ...base, grader: { file: 'arith_retry.env.py' } })), /holdout\.eval\.json: grader\.file: is an environment file: give it as "env"/);
    // what the Evaluate Checkpoints flow and the agent's inline evaluate write for a picked file
    assert.deepStrictEqual(gradingField('game.env.py'), { env: { file: 'game.env.py' } });
    assert.deepStrictEqual(gradingField('reward.py'), { grader: { file: 'reward.py' } });
    await assert.rejects(parseEvalSpecFile(retryCopy('neither', { ...base, env: { file: 'missing.env.py' } })), /holdout\.eval\.json: env\.file: .*missing\.env\.py does not exist/);
    await assert.rejects(parseEvalSpecFile(retryCopy('neither', { ...base, env: { file: 'arith_retry.env.py', max_turns: 0 } })), /holdout\.eval\.json: env\.max_turns/);
  });
});
