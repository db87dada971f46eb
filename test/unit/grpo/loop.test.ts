// The GRPO loop against the real embedded engine (in this process, over HTTP on 127.0.0.1:0) with a
// real Python reward function: what it writes (every cookbook metric with the right type, checkpoint
// records and names, evaluation at step 0 before any update, rollout summaries, every sample), the
// events it sends, a reward function that raises, and cancel-then-resume that neither loses nor
// repeats a step.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { GrpoLoopConfig, runGrpo } from '../../../src/core/grpo/loop';
import type { RunEvent } from '../../../src/core/runs/runEvents';
import { loadRenderer } from '../../../src/core/render';
import type { Renderer } from '../../../src/core/render/types';
import { createRewardRunner } from '../../../src/core/reward';
import type { RewardRunner } from '../../../src/core/reward/types';
import { RunWriter } from '../../../src/core/runs/runWriter';
import { ServiceClient } from '../../../src/core/tinker/client';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { EngineClient, POOL, TestEngine, appliedSteps, assertNoPartialLines, readCheckpointLines, readJsonl, readMetricsLines, startEngineClient, writeReward } from './engineFixture';
import { TRAJECTORY_KEYS } from './metricKeys';

const config = (o: Partial<GrpoLoopConfig> = {}): GrpoLoopConfig => ({
  model: RANDOM_MODEL,
  loraRank: 4,
  learningRate: 1e-3,
  groupsPerBatch: 3,
  groupSize: 4,
  maxTokens: 4,
  temperature: 1,
  iterations: 3,
  saveEvery: 2,
  evalEvery: 2,
  lossFn: 'importance_sampling',
  removeConstantRewardGroups: false,
  seed: 1,
  ...o,
});

const INT_KEYS = ['progress/batch', 'env/all/total_episodes', 'env/all/total_turns', 'env/all/total_ac_tokens', 'env/all/total_ob_tokens'];
const EVERY_STEP_KEYS = [
  'progress/batch',
  'optim/lr',
  'progress/done_frac',
  ...TRAJECTORY_KEYS,
  'grad_norm:last', // the engine's optimizer metrics, merged verbatim
  'learning_rate:last',
  'optim/kl_sample_train_v1',
  'optim/kl_sample_train_v2',
  'optim/entropy',
  'time/total',
  'time/sampling',
  'time/rewards',
  'time/train_step',
  'time/forward_backward',
  'time/optim_step',
  'time/records',
  'time/save_checkpoint_and_get_sampling_client',
];
const EVAL_KEYS = ['test/env/all/reward/total', 'test/env/all/correct', 'test/env/all/format', 'test/env/all/total_episodes', 'test/env/all/by_group/frac_all_good', 'time/run_evaluations_parallel'];

describe('GRPO loop on the embedded engine', function () {
  this.timeout(180_000);
  let dir: string;
  let engine: TestEngine;
  let env: EngineClient | undefined;
  let service: ServiceClient;
  let renderer: Renderer;
  let reward: RewardRunner;

  before(async () => {
    env = await startEngineClient('tinker-grpo-loop-');
    ({ dir, engine, service } = env);
    renderer = (await loadRenderer({ model: RANDOM_MODEL, cacheDir: path.join(dir, 'cache') })).renderer;
    reward = await createRewardRunner({ file: writeReward(dir), workers: 1 });
  });
  after(async () => {
    await reward?.close();
    await env?.close();
  });

  describe('a complete run (3 steps, save_every 2, eval_every 2)', () => {
    let runDir: string;
    const events: RunEvent[] = [];
    let result: Awaited<ReturnType<typeof runGrpo>>;

    before(async () => {
      const writer = RunWriter.create(path.join(dir, 'runs'), 'full');
      writer.writeConfig({ model_name: RANDOM_MODEL });
      runDir = writer.dir;
      result = await runGrpo({ service, config: config(), renderer, pool: POOL, reward, writer, onEvent: (e) => events.push(e) });
    });

    it('completes and reports the holdout reward of its first and last evaluation', () => {
      assert.strictEqual(result.status, 'completed', result.error);
      assert.strictEqual(result.iterationsRun, 3);
      assert.strictEqual(typeof result.firstTestReward, 'number');
      assert.strictEqual(typeof result.lastTestReward, 'number');
    });

    it('writes one metrics line per step with every cookbook metric, integers where the cookbook has them', () => {
      const lines = readMetricsLines(runDir);
      assert.deepStrictEqual(lines.map((l) => l.step), [0, 1, 2]);
      for (const line of lines) {
        for (const k of EVERY_STEP_KEYS) assert.strictEqual(typeof line[k], 'number', `step ${line.step}: ${k} is ${JSON.stringify(line[k])}`);
        for (const k of INT_KEYS) assert.ok(Number.isInteger(line[k]), `step ${line.step}: ${k} is an integer`);
        assert.strictEqual(line['progress/batch'], line.step);
        assert.strictEqual(line['optim/lr'], 1e-3);
        assert.strictEqual(line['progress/done_frac'], (line.step + 1) / 3);
        assert.strictEqual(line['env/all/total_episodes'], 12, '3 groups × 4 samples');
        assert.strictEqual(line['env/all/turns_per_episode'], 1);
        assert.ok((line['env/all/ac_tokens_per_turn'] as number) <= 4, 'max_tokens 4');
        const fracs = ['frac_mixed', 'frac_all_good', 'frac_all_bad'].map((f) => line[`env/all/by_group/${f}`] as number);
        assert.ok(Math.abs(fracs.reduce((a, b) => a + b, 0) - 1) < 1e-9, 'the group fractions add up to 1');
        const trunc = line['env/all/frac_truncated'] as number;
        assert.ok(trunc >= 0 && trunc <= 1);
      }
    });

    it('evaluates at step 0 (before any update) and every eval_every steps, on the holdout with one sample each', () => {
      const lines = readMetricsLines(runDir);
      for (const k of EVAL_KEYS) {
        assert.strictEqual(typeof lines[0]![k], 'number', `step 0: ${k}`);
        assert.strictEqual(typeof lines[2]![k], 'number', `step 2: ${k}`);
        assert.strictEqual(lines[1]![k], undefined, `no ${k} at step 1`);
      }
      assert.strictEqual(lines[0]!['test/env/all/total_episodes'], POOL.holdout.length);
      assert.strictEqual(lines[0]!['time/save_checkpoint'], undefined);
      assert.strictEqual(typeof lines[1]!['time/save_checkpoint'], 'number', 'the checkpoint of step s = 2 is saved in step 1');
      const evalEvents = events.filter((e) => e.type === 'phase' && e.phase === 'eval');
      assert.ok(evalEvents.length > 0);
      assert.ok(evalEvents.every((e) => e.type === 'phase' && e.step !== 1));
    });

    it('writes timing_spans.jsonl, one line per step, with the timed spans', () => {
      const lines = readJsonl(path.join(runDir, 'timing_spans.jsonl')) as Array<{ step: number; spans: Array<{ name: string; duration: number; wall_start: number; wall_end: number }> }>;
      assert.deepStrictEqual(lines.map((l) => l.step), [0, 1, 2]);
      assert.deepStrictEqual(lines[1]!.spans.map((s) => s.name), ['sampling', 'rewards', 'records', 'train_step', 'save_checkpoint', 'save_checkpoint_and_get_sampling_client']);
      for (const s of lines[0]!.spans) assert.ok(s.wall_end >= s.wall_start && s.duration >= 0);
    });

    it('saves the periodic checkpoint at s = i + 1 (kind both) and a final one, in the cookbook record form', () => {
      const recs = readCheckpointLines(runDir);
      assert.deepStrictEqual(recs.map((r) => [r.name, r.batch]), [['000002', 2], ['final', 3]]);
      for (const r of recs) {
        assert.match(r.state_path!, /^tinker:\/\/.+\/weights\/(000002|final)$/);
        assert.match(r.sampler_path!, /^tinker:\/\/.+\/sampler_weights\/(000002|final)$/);
      }
      const raw = fs.readFileSync(path.join(runDir, 'checkpoints.jsonl'), 'utf8').split('\n')[0]!;
      assert.deepStrictEqual(Object.keys(JSON.parse(raw) as object), ['name', 'batch', 'state_path', 'sampler_path']);
    });

    it('writes rollout summaries for training and evaluation in the cookbook schema', () => {
      const train = readJsonl(path.join(runDir, 'iteration_000001', 'train_rollout_summaries.jsonl')) as Array<Record<string, unknown>>;
      assert.strictEqual(train.length, 12);
      for (const s of train) {
        assert.deepStrictEqual(Object.keys(s), ['schema_version', 'split', 'iteration', 'group_idx', 'traj_idx', 'tags', 'sampling_client_step', 'total_reward', 'final_reward', 'trajectory_metrics', 'steps', 'final_ob_len']);
        assert.strictEqual(s.split, 'train');
        assert.strictEqual(s.iteration, 1);
        assert.strictEqual(s.sampling_client_step, 1);
        const [step] = s.steps as Array<Record<string, unknown>>;
        assert.deepStrictEqual(Object.keys(step!), ['step_idx', 'ob_len', 'ac_len', 'reward', 'episode_done', 'metrics', 'logs']);
        assert.strictEqual(step!.reward, s.total_reward);
      }
      assert.deepStrictEqual(train.map((s) => [s.group_idx, s.traj_idx]).slice(0, 5), [[0, 0], [0, 1], [0, 2], [0, 3], [1, 0]]);
      const evals = readJsonl(path.join(runDir, 'iteration_000000', 'eval_test_rollout_summaries.jsonl')) as Array<Record<string, unknown>>;
      assert.strictEqual(evals.length, POOL.holdout.length);
      assert.ok(evals.every((e) => e.split === 'eval/test'));
      assert.ok(!fs.existsSync(path.join(runDir, 'iteration_000001', 'eval_test_rollout_summaries.jsonl')));
    });

    it('keeps every sample of every group with its prompt, completion, tokens, reward, advantage and log-probs', () => {
      const samples = readJsonl(path.join(runDir, 'iteration_000000', 'train_samples.jsonl')) as Array<Record<string, unknown>>;
      assert.strictEqual(samples.length, 12);
      const s = samples[0]!;
      assert.match(s.prompt as string, /^<\|im_start\|>user\nWhat is 1 \+ 2\?<\|im_end\|>\n<\|im_start\|>assistant\n$/);
      assert.strictEqual((s.completion_tokens as number[]).length, (s.logprobs as number[]).length);
      assert.ok(['stop', 'length'].includes(s.stop_reason as string));
      for (let g = 0; g < 3; g++) {
        const group = samples.filter((x) => x.group_idx === g);
        const mean = group.reduce((a, x) => a + (x.reward as number), 0) / group.length;
        for (const x of group) assert.ok(Math.abs((x.advantage as number) - ((x.reward as number) - mean)) < 1e-6, 'advantage = reward − group mean');
      }
    });

    it('scores a raising reward function 0, warns about it and keeps going', () => {
      // batch 0 holds problems t:1..t:3; t:3 ("boom") raises in every sample
      const samples = readJsonl(path.join(runDir, 'iteration_000000', 'train_samples.jsonl')) as Array<Record<string, unknown>>;
      const boom = samples.filter((x) => x.problem_id === 't:3');
      assert.strictEqual(boom.length, 4);
      for (const b of boom) {
        assert.strictEqual(b.reward, 0);
        assert.strictEqual((b.reward_error as { kind: string }).kind, 'exception');
      }
      const warnings = events.filter((e) => e.type === 'warning');
      assert.ok(warnings.some((w) => w.type === 'warning' && w.step === 0 && /4 of 12 train rewards failed/.test(w.message) && /boom on purpose/.test(w.message)));
      assert.match(fs.readFileSync(path.join(runDir, 'logs.log'), 'utf8'), /ValueError: boom on purpose/);
    });

    it('sends started, phases, one metrics event per step, checkpoint events and finished', () => {
      assert.deepStrictEqual(events[0], { type: 'started', runDir, runName: path.basename(runDir), model: RANDOM_MODEL, startStep: 0, endStep: 3, resumed: false });
      assert.deepStrictEqual(events.filter((e) => e.type === 'metrics').map((e) => e.type === 'metrics' && e.step), [0, 1, 2]);
      assert.deepStrictEqual(events.filter((e) => e.type === 'checkpoint').map((e) => e.type === 'checkpoint' && e.record.name), ['000002', 'final']);
      assert.deepStrictEqual(events.at(-1), { type: 'finished', runDir, status: 'completed', lastStep: 2 });
      const phases = new Set(events.flatMap((e) => (e.type === 'phase' ? [e.phase] : [])));
      assert.deepStrictEqual([...phases].sort(), ['checkpoint', 'eval', 'rewards', 'sampling', 'training']);
    });

    it('runs one forward_backward and one optim_step per step on the engine', async () => {
      const ckpt = readCheckpointLines(runDir)[0]!;
      const runId = ckpt.state_path!.slice('tinker://'.length).split('/')[0]!;
      const steps = (await appliedSteps(engine)).filter((s) => s.model_id === runId);
      const types = steps.map((s) => s.type);
      assert.strictEqual(types.filter((t) => t === 'forward_backward').length, 3);
      assert.strictEqual(types.filter((t) => t === 'optim_step').length, 3);
      assertNoPartialLines(runDir);
    });
  });

  describe('a seeded run (sampling_seed)', () => {
    const run = async (name: string, samplingSeed: number) => {
      const writer = RunWriter.create(path.join(dir, 'runs'), name);
      writer.writeConfig({ model_name: RANDOM_MODEL });
      const r = await runGrpo({ service, config: config({ samplingSeed, iterations: 3, saveEvery: 0, evalEvery: 2 }), renderer, pool: POOL, reward, writer });
      assert.strictEqual(r.status, 'completed', r.error);
      const file = (i: number, f: string) => readJsonl(path.join(writer.dir, `iteration_00000${i}`, f)) as Array<Record<string, unknown>>;
      const pick = (xs: Array<Record<string, unknown>>) => xs.map((x) => [x.completion_tokens, x.logprobs, x.reward]);
      return {
        train: [0, 1, 2].map((i) => pick(file(i, 'train_samples.jsonl'))),
        // the evaluation at step 2 samples the weights after two updates: it shows the training was the same too
        evals: [0, 2].map((i) => pick(file(i, 'eval_test_samples.jsonl'))),
        rewards: readMetricsLines(writer.dir).map((l) => l['env/all/reward/total']),
      };
    };

    it('gives the same samples, rewards and updates when run twice, and other samples with another seed', async () => {
      const a = await run('seeded-a', 7);
      const b = await run('seeded-b', 7);
      assert.deepStrictEqual(b, a);
      const c = await run('seeded-c', 8);
      assert.notDeepStrictEqual(c.train[0], a.train[0]);
    });
  });

  describe('cancel, then resume', () => {
    it('stops cleanly after the step in flight, saves a resume point, and the resumed run repeats and loses nothing', async () => {
      const writer = RunWriter.create(path.join(dir, 'runs'), 'cancel');
      writer.writeConfig({ model_name: RANDOM_MODEL });
      const ac = new AbortController();
      const cfg = config({ iterations: 5, saveEvery: 0, evalEvery: 0, groupsPerBatch: 2 });
      const first = await runGrpo({
        service,
        config: cfg,
        renderer,
        pool: POOL,
        reward,
        writer,
        signal: ac.signal,
        onEvent: (e) => {
          if (e.type === 'metrics' && e.step === 1) ac.abort();
        },
      });
      assert.strictEqual(first.status, 'cancelled');
      assert.strictEqual(first.iterationsRun, 2);
      assertNoPartialLines(writer.dir);
      assert.deepStrictEqual(readMetricsLines(writer.dir).map((l) => l.step), [0, 1]);
      const resumePoint = readCheckpointLines(writer.dir);
      assert.deepStrictEqual(resumePoint.map((r) => [r.name, r.batch]), [['000002', 2]]);
      assert.ok(!fs.existsSync(path.join(writer.dir, 'iteration_000002')), 'nothing of the dropped step was written');

      writer.close();
      const again = RunWriter.open(writer.dir);
      const resumeFrom = again.lastStateCheckpoint();
      const events: RunEvent[] = [];
      const second = await runGrpo({ service, config: cfg, renderer, pool: POOL, reward, writer: again, resumeFrom, onEvent: (e) => events.push(e) });
      assert.strictEqual(second.status, 'completed', second.error);
      assert.strictEqual(second.iterationsRun, 3);
      assert.deepStrictEqual(events[0], { type: 'started', runDir: writer.dir, runName: path.basename(writer.dir), model: RANDOM_MODEL, startStep: 2, endStep: 5, resumed: true });
      assert.deepStrictEqual(readMetricsLines(writer.dir).map((l) => l.step), [0, 1, 2, 3, 4], 'each step exactly once, even before merging');
      // progress/tokens_trained is cumulative and the resumed run continues from step 1's value
      const tokens = readMetricsLines(writer.dir).map((l) => l['progress/tokens_trained'] as number);
      assert.ok(tokens.every((t) => Number.isInteger(t) && t >= 0), `tokens_trained ${JSON.stringify(tokens)}`);
      for (let k = 1; k < tokens.length; k++) assert.ok(tokens[k]! >= tokens[k - 1]!, `tokens_trained never goes back (a resume continues the sum): ${JSON.stringify(tokens)}`);
      assert.ok(tokens[4]! > 0, 'five steps trained some tokens');
      assert.deepStrictEqual(readCheckpointLines(writer.dir).map((r) => [r.name, r.batch]), [['000002', 2], ['final', 5]]);

      // the resumed model was created from the saved state (with its optimizer) and ran 3 more updates
      const runOf = (p: string) => p.slice('tinker://'.length).split('/')[0]!;
      const [resumeRec, finalRec] = readCheckpointLines(writer.dir);
      assert.notStrictEqual(runOf(resumeRec!.state_path!), runOf(finalRec!.state_path!));
      const applied = await appliedSteps(engine);
      const ofModel = (run: string) => applied.filter((s) => s.model_id === run).map((s) => s.type);
      const firstModel = ofModel(runOf(resumeRec!.state_path!));
      const resumedModel = ofModel(runOf(finalRec!.state_path!));
      assert.strictEqual(firstModel.filter((t) => t === 'optim_step').length, 2);
      assert.strictEqual(resumedModel[0], 'load_weights');
      assert.strictEqual(resumedModel.filter((t) => t === 'optim_step').length, 3, 'steps 2, 3, 4 — none repeated');
      assertNoPartialLines(writer.dir);
    });
  });
});
