// The spec layer's one table takes `env` where it takes `reward` (issue 36, item 2): validation and its
// messages, the JSON schema contributed for *.grpo.json, positioned diagnostics, sweeps over an env
// spec's fields (points checked, and run on the embedded engine), and the agent's init_grpo /
// train_grpo_step / sample on an env spec. Engine parts run tinker-studio/arith-chat with the
// arith-retry example's env file in real Python; nothing depends on what the model answers.
import * as assert from 'assert';
import Ajv from 'ajv';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { TrainingSession } from '../../../src/core/agent/session';
import { checkSweep } from '../../../src/core/experiments/expand';
import { runSweep } from '../../../src/core/experiments/runSweep';
import { parseSweepText } from '../../../src/core/experiments/sweepFile';
import { sweepDiagnostics } from '../../../src/core/experiments/sweepDiagnostics';
import { GRPO_SPEC, grpoSpecJsonSchema, parseGrpoSpecFile, parseGrpoSpecText } from '../../../src/core/grpo/spec';
import { specDiagnostics } from '../../../src/core/spec/diagnostics';
import { problemsOf as problemsOfSpec } from '../grpo/specProblems';
import { ServiceClient } from '../../../src/core/tinker/client';
import type { ComputeBackend } from '../../../src/engine/contract';
import { createComputeBackend } from '../../../src/engine/model';
import { ARITH_CHAT_MODEL } from '../../../src/engine/model/models';
import { startEngineServer, type EngineServer } from '../../../src/engine/server';
import { readMetricsLines, readJsonl } from '../grpo/engineFixture';

const root = path.resolve(__dirname, '../../../..');
const RETRY = path.join(root, 'examples', 'arith-retry');

const envSpec = (o: Record<string, unknown> = {}) => ({ model: ARITH_CHAT_MODEL, max_tokens: 6, iterations: 2, dataset: { path: 'train.jsonl' }, env: { file: 'arith_retry.env.py' }, ...o });

const problemsOf = (spec: unknown) => problemsOfSpec(spec, 'retry.grpo.json');

describe('env: the spec layer takes env specs (validation, schema, diagnostics, sweeps, agent tools)', function () {
  this.timeout(600_000);

  describe('validation', () => {
    it('an env spec parses, with the cookbook\'s MessageEnv defaults', () => {
      const spec = parseGrpoSpecText(JSON.stringify(envSpec()), 'retry.grpo.json');
      assert.strictEqual(spec.reward, undefined);
      assert.deepStrictEqual(spec.env, { file: 'arith_retry.env.py', timeout_ms: 10_000, max_turns: 8, failed_parse_reward: -1, terminate_on_parse_error: true, context_overflow_reward: -0.1 });
    });

    it('names the field of each mistake: both reward and env, neither, a reward file as env, a bad limit, an unknown key', () => {
      assert.deepStrictEqual(problemsOf(envSpec({ reward: { file: 'reward.py' } })), ['retry.grpo.json: env: give "reward" or "env", not both (an environment computes its own rewards)']);
      assert.match(problemsOf(envSpec({ env: undefined })).join('\n'), /retry\.grpo\.json: reward: required .*or an environment \("env"\) instead/);
      assert.match(problemsOf(envSpec({ env: { file: 'reward.py' } })).join('\n'), /retry\.grpo\.json: env\.file: must be an environment file: \*\.env\.py/);
      assert.match(problemsOf(envSpec({ env: undefined, reward: { file: 'arith_retry.env.py' } })).join('\n'), /retry\.grpo\.json: reward\.file: is an environment file: give it as "env": \{"file": …\} instead of "reward"/);
      assert.match(problemsOf(envSpec({ env: { file: 'arith_retry.env.py', max_turns: 0 } })).join('\n'), /retry\.grpo\.json: env\.max_turns/);
      assert.match(problemsOf(envSpec({ env: { file: 'arith_retry.env.py', max_trajectory_tokens: -3 } })).join('\n'), /retry\.grpo\.json: env\.max_trajectory_tokens/);
      assert.match(problemsOf(envSpec({ env: { file: 'arith_retry.env.py', turns: 2 } })).join('\n'), /retry\.grpo\.json: env.*turns/);
    });

    it('resolves env.file against the spec\'s folder and checks it exists, as reward.file', async () => {
      const { spec } = await parseGrpoSpecFile(path.join(RETRY, 'arith-retry.grpo.json'));
      assert.strictEqual(spec.env!.file, path.join(RETRY, 'arith_retry.env.py'));
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-env-spec-'));
      try {
        fs.writeFileSync(path.join(dir, 'train.jsonl'), '{"x": 1, "y": 2}\n');
        fs.writeFileSync(path.join(dir, 'retry.grpo.json'), JSON.stringify(envSpec({ env: { file: 'gone.env.py' } })));
        await assert.rejects(parseGrpoSpecFile(path.join(dir, 'retry.grpo.json')), /retry\.grpo\.json: env\.file: file "gone\.env\.py" not found/);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('the JSON schema and positioned diagnostics', () => {
    it('the schema contributed for *.grpo.json describes env and its fields, and the example env specs satisfy it', () => {
      const schema = grpoSpecJsonSchema() as { properties: Record<string, { properties?: Record<string, { description?: string }> }>; required?: string[] };
      const env = schema.properties.env!;
      for (const f of ['file', 'class', 'timeout_ms', 'workers', 'max_turns', 'max_trajectory_tokens', 'failed_parse_reward', 'terminate_on_parse_error', 'context_overflow_reward']) assert.ok(env.properties![f]?.description, `env.${f}`);
      assert.match(env.properties!.max_trajectory_tokens!.description!, /Capped by the model's context length/);
      assert.ok(!(schema.required ?? []).includes('reward'), 'reward is not required by the schema (env instead)');
      const validate = new Ajv({ strict: false }).compile(schema);
      for (const ex of ['arith-retry', 'arith-chain', 'arith-tools']) {
        const spec = JSON.parse(fs.readFileSync(path.join(root, 'examples', ex, `${ex}.grpo.json`), 'utf8')) as unknown;
        assert.ok(validate(spec), `${ex}: ${JSON.stringify(validate.errors)}`);
      }
      assert.ok(!validate(envSpec({ env: { file: 'arith_retry.env.py', max_turns: 0 } })), 'max_turns ≥ 1 in the schema too');
    });

    it('the editor\'s diagnostics sit on the env field that is wrong', () => {
      const text = JSON.stringify(envSpec({ env: { file: 'arith_retry.env.py', max_turns: 0 } }), null, 2);
      const diags = specDiagnostics(GRPO_SPEC, text);
      assert.strictEqual(diags.length, 1, JSON.stringify(diags));
      const line = text.split('\n').findIndex((l) => l.includes('"max_turns"')) + 1;
      assert.strictEqual(diags[0]!.line, line);
      assert.match(diags[0]!.message, /^env\.max_turns: /);
      const both = JSON.stringify(envSpec({ reward: { file: 'reward.py' } }), null, 2);
      const d2 = specDiagnostics(GRPO_SPEC, both);
      assert.deepStrictEqual(d2.map((d) => [d.line, d.message]), [[both.split('\n').findIndex((l) => l.includes('"env"')) + 1, 'env: give "reward" or "env", not both (an environment computes its own rewards)']]);
    });
  });

  describe('on the embedded engine (arith-chat)', () => {
    let dir: string;
    let backend: ComputeBackend;
    let server: EngineServer;
    let specFile: string;

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-env-layer-'));
      backend = await createComputeBackend({});
      server = await startEngineServer({ dataDir: path.join(dir, 'engine-data'), backend, longPollMs: 2000 });
      fs.copyFileSync(path.join(RETRY, 'arith_retry.env.py'), path.join(dir, 'arith_retry.env.py'));
      fs.writeFileSync(path.join(dir, 'train.jsonl'), ['{"x": 3, "y": 4}', '{"x": 12, "y": 9}', '{"x": 5, "y": 5}', '{"x": 20, "y": 31}'].join('\n') + '\n');
      specFile = path.join(dir, 'retry.grpo.json');
      fs.writeFileSync(
        specFile,
        JSON.stringify({ ...envSpec(), name: 'retry', lora_rank: 4, learning_rate: 0.002, groups_per_batch: 2, group_size: 2, iterations: 2, save_every: 0, eval_every: 0, seed: 1, sampling_seed: 3, env: { file: 'arith_retry.env.py', max_turns: 2, workers: 1 } }),
      );
    });
    after(async () => {
      await server?.close();
      await backend?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const connect = () => ServiceClient.connect({ baseUrl: server.url, clientVersion: 'test' });

    it('a sweep over env.max_turns and learning_rate: every point checked as an env spec, a bad point named at its field', async () => {
      const file = path.join(dir, 'turns.sweep.json');
      const sweep = { base: 'retry.grpo.json', method: 'grid', parameters: { 'env.max_turns': { values: [1, 2] }, learning_rate: { values: [0.001, 0.002] } }, metric: { name: 'env/all/reward/total', goal: 'maximize' } };
      const checked = await checkSweep(file, parseSweepText(JSON.stringify(sweep), 'turns.sweep.json'));
      assert.deepStrictEqual(checked.problems, []);
      assert.deepStrictEqual(
        checked.points.map((p) => [(p.spec as { env: { max_turns: number; file: string } }).env.max_turns, (p.spec as { learning_rate: number }).learning_rate]),
        [[1, 0.001], [1, 0.002], [2, 0.001], [2, 0.002]],
      );
      for (const p of checked.points) assert.strictEqual((p.spec as { env: { file: string } }).env.file, path.join(dir, 'arith_retry.env.py'), 'the env file resolved against the base spec');
      const bad = { ...sweep, parameters: { 'env.max_turns': { values: [2, 0] } } };
      const c2 = await checkSweep(file, parseSweepText(JSON.stringify(bad), 'turns.sweep.json'));
      assert.deepStrictEqual(c2.problems.map((p) => [p.point.name, p.path]), [['env.max_turns_0', ['env', 'max_turns']]]);
      // the sweep file's own diagnostics point at the parameter whose value is wrong
      const text = JSON.stringify(bad, null, 2);
      const diags = await sweepDiagnostics(text, file);
      assert.ok(diags.some((d) => /env\.max_turns/.test(d.message)), JSON.stringify(diags));
    });

    it('runs a sweep over env.max_turns: each point an environment run with its own max_turns', async () => {
      const file = path.join(dir, 'run.sweep.json');
      fs.writeFileSync(file, JSON.stringify({ base: 'retry.grpo.json', method: 'grid', parameters: { 'env.max_turns': { values: [1, 2] }, iterations: { value: 1 } }, metric: { name: 'env/all/reward/total', goal: 'maximize' } }));
      const runsDir = path.join(dir, 'runs-sweep');
      const r = await runSweep({ sweepFile: file, runsDir, connect, cacheDir: path.join(dir, 'cache') });
      assert.deepStrictEqual(r.outcomes.map((o) => [o.name, o.status]), [['env.max_turns_1', 'completed'], ['env.max_turns_2', 'completed']], 'named by the swept field (iterations is a constant)');
      for (const [o, turns] of r.outcomes.map((o, i) => [o, i + 1] as const)) {
        const cfg = JSON.parse(fs.readFileSync(path.join(o.dir, 'config.json'), 'utf8')) as { env: { max_turns: number } };
        assert.strictEqual(cfg.env.max_turns, turns);
        assert.strictEqual(typeof readMetricsLines(o.dir)[0]!['env/all/turns_per_episode'], 'number');
        const recs = readJsonl(path.join(o.dir, 'iteration_000000', 'train_samples.jsonl')) as Array<{ transcript: { turns: unknown[] } }>;
        assert.strictEqual(recs.length, 4);
        assert.ok(recs.every((x) => x.transcript.turns.length >= 1 && x.transcript.turns.length <= turns), `max_turns ${turns}`);
      }
    });

    it('the agent\'s init_grpo, train_grpo_step and sample take an env spec', async () => {
      const s = new TrainingSession({ runsDir: path.join(dir, 'runs-agent'), cacheDir: path.join(dir, 'cache'), baseDir: dir, connect });
      try {
        const init = await s.initRun('grpo', { spec_file: 'retry.grpo.json', overrides: { env: { max_turns: 1 } } });
        assert.match(init.text, /environment .*arith_retry\.env\.py \(episodes of up to 1 turn\)/);
        assert.strictEqual(init.value.train_problems, 4);
        const cfg = JSON.parse(fs.readFileSync(path.join(init.value.run_dir, 'config.json'), 'utf8')) as { env: { max_turns: number; file: string } };
        assert.deepStrictEqual([cfg.env.max_turns, cfg.env.file], [1, path.join(dir, 'arith_retry.env.py')], 'the override merged into env, its file kept');
        const step = await s.trainRun('grpo', { num_steps: 1 });
        assert.deepStrictEqual([step.value.first_step, step.value.last_step], [0, 0]);
        const recs = readJsonl(path.join(init.value.run_dir, 'iteration_000000', 'train_samples.jsonl')) as Array<{ transcript: { turns: unknown[] } }>;
        assert.ok(recs.length === 4 && recs.every((x) => x.transcript.turns.length <= 1), 'episodes of one turn (the override)');
        const sampled = await s.sample({ prompts: [{ prompt: 'What is 1 + 2?', ground_truth: '3' }], n: 2 });
        assert.deepStrictEqual(sampled.value.results[0]!.completions.map((c) => c.reward), [null, null]);
        assert.match(sampled.text, /unscored: this run's environment \(arith_retry\.env\.py\) scores whole episodes/);
        await s.finish();
      } finally {
        await s.close();
      }
    });
  });
});
