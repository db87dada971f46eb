// Environment runs through the real GRPO loop on the embedded engine (in this process, real HTTP on
// 127.0.0.1:0) with tinker-studio/arith-chat and env files in real Python and real Node workers:
// - datums reach forward_backward as the cookbook's trajectory_to_data rule says: one datum per
//   trajectory whose observations extend each other, the whole sequence of its last turn, the
//   trajectory's advantage on exactly its sampled tokens;
// - metrics env/all/… (the cookbook's keys, the env's own per-step metric) and reward/total;
// - sample records keep the transcript; an env that raises scores its episode 0, is reported, and the
//   run goes on;
// - the context cap: max_trajectory_tokens is capped by the model's context (the service's
//   max_context_length), an observation that would overflow ends its episode with
//   context_overflow_reward;
// - cancel (between steps and in the middle of an episode) and resume: a checkpoint to resume from,
//   metrics.jsonl with every step once, sample records continuing.
// Nothing here depends on what arith-chat answers: the rewards are the env's (the reply's length),
// and the assertions are on mechanics (turns, roles, datums, keys, files).
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Problem, PromptPool } from '../../../src/core/data/types';
import { runEpisode, trajectoryTokenLimit, type EpisodeLimits } from '../../../src/core/env/episode';
import { createEnvRunner, type EnvRunner } from '../../../src/core/env/runner';
import { GrpoLoopConfig, runGrpo } from '../../../src/core/grpo/loop';
import { loadRenderer } from '../../../src/core/render';
import type { Renderer } from '../../../src/core/render/types';
import type { RunEvent } from '../../../src/core/runs/runEvents';
import { RunWriter } from '../../../src/core/runs/runWriter';
import { ServiceClient } from '../../../src/core/tinker/client';
import type { ComputeBackend, EngineDatum } from '../../../src/engine/contract';
import { createComputeBackend } from '../../../src/engine/model';
import { ARITH_CHAT_MODEL } from '../../../src/engine/model/models';
import { EngineServer, startEngineServer } from '../../../src/engine/server';
import { textInput } from '../../../src/core/tinker/types';
import { stopParam } from '../../../src/core/rollouts/rollout';
import { assertNoPartialLines, readCheckpointLines, readJsonl, readMetricsLines } from '../grpo/engineFixture';
import { removeTempDirs, rewardFile } from '../reward/fixtures';

/**
 * Two turns per episode: the question, then (whatever the reply) "Wrong, try again." and a second
 * reply. Reward: 1 for a reply of even length, per turn, so groups split whatever the model says.
 * A problem with "boom" raises in step(); "long" sends a follow-up too long for the context.
 */
const PY_ENV = `
class TwoTurns:
    def __init__(self, problem):
        self.p = problem
        self.turn = 0
        self.history = [{"role": "user", "content": "What is %d + %d?" % (problem["x"], problem["y"])}]
    def initial_observation(self):
        if self.p.get("huge"):
            return [{"role": "user", "content": "x" * 300}]
        return list(self.history)
    def step(self, message):
        self.turn += 1
        if self.p.get("boom"):
            raise ValueError("env boom on purpose")
        even = 1 if len(message["content"]) % 2 == 0 else 0
        if self.turn >= 2:
            return {"reward": float(even), "episode_done": True, "metrics": {"even": even, "second_turn": 1}}
        follow = "Wrong, try again." if not self.p.get("long") else "y" * 240
        self.history += [message, {"role": "user", "content": follow}]
        return {"reward": 0.5 * even, "episode_done": False, "metrics": {"even": even}, "next_messages": list(self.history)}
`;

const JS_ENV = `
export class TwoTurns {
  constructor(problem) { this.p = problem; this.turn = 0; this.history = [{ role: 'user', content: 'What is ' + problem.x + ' + ' + problem.y + '?' }]; }
  initialObservation() { return this.history.slice(); }
  step(message) {
    this.turn++;
    if (this.p.boom) throw new Error('env boom on purpose');
    const even = message.content.length % 2 === 0 ? 1 : 0;
    if (this.turn >= 2) return { reward: even, episodeDone: true, metrics: { even, second_turn: 1 } };
    this.history.push(message, { role: 'user', content: 'Wrong, try again.' });
    return { reward: 0.5 * even, episodeDone: false, metrics: { even }, nextMessages: this.history.slice() };
  }
}
`;

const problem = (id: string, row: Record<string, unknown>): Problem => ({ id, messages: [{ role: 'user', content: `What is ${row.x} + ${row.y}?` }], groundTruth: '', row });

const POOL: PromptPool = {
  train: [problem('t:1', { x: 1, y: 2 }), problem('t:2', { x: 3, y: 4, boom: true }), problem('t:3', { x: 5, y: 1 }), problem('t:4', { x: 2, y: 2 })],
  holdout: [problem('h:1', { x: 4, y: 4 }), problem('h:2', { x: 6, y: 1 })],
  skipped: [],
};

const LIMITS: Omit<EpisodeLimits, 'maxTokens'> = { maxTurns: 3, failedParseReward: -1, terminateOnParseError: false, contextOverflowReward: -0.1 };

const config = (o: Partial<GrpoLoopConfig> = {}): GrpoLoopConfig => ({
  model: ARITH_CHAT_MODEL,
  loraRank: 4,
  learningRate: 1e-3,
  groupsPerBatch: 2,
  groupSize: 3,
  maxTokens: 16,
  temperature: 1,
  iterations: 2,
  saveEvery: 0,
  evalEvery: 1,
  lossFn: 'importance_sampling',
  removeConstantRewardGroups: false,
  seed: 1,
  samplingSeed: 5,
  ...o,
});

interface Turn {
  new_messages: Array<{ role: string; content: string }>;
  reply: { role: string; content: string };
  ob_tokens: number;
  ac_tokens: number;
  reward: number;
  metrics: Record<string, number>;
  parse_error?: string;
}
interface Rec {
  group_idx: number;
  traj_idx: number;
  problem_id: string;
  reward: number;
  advantage: number;
  completion_tokens: number[];
  reward_error?: { kind: string; message: string };
  transcript?: { turns: Turn[]; stop: string };
}

/** The forward_backward calls the engine's compute backend received (the real backend computes them). */
function recordForwardBackward(backend: ComputeBackend): Array<{ modelId: string; data: EngineDatum[] }> {
  const calls: Array<{ modelId: string; data: EngineDatum[] }> = [];
  const real = backend.forwardBackward.bind(backend);
  backend.forwardBackward = (modelId, data, lossFn, cfg, forwardOnly) => {
    if (!forwardOnly) calls.push({ modelId, data });
    return real(modelId, data, lossFn, cfg, forwardOnly);
  };
  return calls;
}

describe('env: environment runs through the GRPO loop on the embedded engine (arith-chat)', function () {
  this.timeout(600_000);
  let dir: string;
  let backend: ComputeBackend;
  let server: EngineServer;
  let service: ServiceClient;
  let renderer: Renderer;
  let calls: Array<{ modelId: string; data: EngineDatum[] }>;
  const runners: EnvRunner[] = [];

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-env-loop-'));
    backend = await createComputeBackend({}); // the shipped weights: arith-chat, 256 positions
    assert.ok(backend.listBaseModels().some((m) => m.name === ARITH_CHAT_MODEL), 'arith-chat is served (its weights file is in the source tree)');
    calls = recordForwardBackward(backend);
    server = await startEngineServer({ dataDir: path.join(dir, 'engine-data'), backend, longPollMs: 2000 });
    service = await ServiceClient.connect({ baseUrl: server.url, clientVersion: 'test' });
    renderer = (await loadRenderer({ model: ARITH_CHAT_MODEL, cacheDir: path.join(dir, 'cache') })).renderer;
  });
  after(async () => {
    await Promise.all(runners.map((r) => r.close()));
    service?.close();
    await server?.close();
    await backend?.close();
    removeTempDirs();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const open = async (name: string, source: string) => {
    const r = await createEnvRunner({ file: rewardFile(name, source), workers: 2, timeoutMs: 20_000 });
    runners.push(r);
    return r;
  };

  for (const [lang, file, source] of [
    ['Python', 'two_turns.env.py', PY_ENV],
    ['JS', 'two_turns.env.mjs', JS_ENV],
  ] as const) {
    describe(`a two-step run with the env in ${lang}`, () => {
      let runDir: string;
      const events: RunEvent[] = [];
      let result: Awaited<ReturnType<typeof runGrpo>>;
      let from: number;

      before(async () => {
        const env = await open(file, source);
        const writer = RunWriter.create(path.join(dir, 'runs'), `full-${lang}`);
        writer.writeConfig({ model_name: ARITH_CHAT_MODEL });
        runDir = writer.dir;
        from = calls.length;
        result = await runGrpo({ service, config: config(), renderer, pool: POOL, env, envLimits: LIMITS, writer, onEvent: (e) => events.push(e) });
      });

      const samples = (i: number, split = 'train') => readJsonl(path.join(runDir, `iteration_00000${i}`, `${split}_samples.jsonl`)) as Rec[];

      it('completes both iterations, one metrics line each', () => {
        assert.strictEqual(result.status, 'completed', result.error);
        assert.deepStrictEqual(readMetricsLines(runDir).map((l) => l.step), [0, 1]);
        assertNoPartialLines(runDir);
      });

      it('keeps every episode as a transcript: user turns and the model\'s replies, per-step rewards and metrics', () => {
        for (const i of [0, 1]) {
          const recs = samples(i);
          assert.strictEqual(recs.length, 6, '2 groups × 3 episodes');
          for (const r of recs.filter((x) => !x.reward_error)) {
            const turns = r.transcript!.turns;
            // a reply that does not parse (terminate_on_parse_error false here) adds failed_parse_reward −1
            const parse = (t: Turn) => (t.parse_error !== undefined ? -1 : 0);
            assert.ok(turns.length >= 1 && turns.length <= 2);
            assert.deepStrictEqual(turns[0]!.new_messages.map((m) => m.role), ['user']);
            assert.match(turns[0]!.new_messages[0]!.content, /^What is \d \+ \d\?$/);
            for (const t of turns) assert.strictEqual(t.reply.role, 'assistant');
            if (turns.length === 2) {
              // the env's follow-up comes after the model's own first reply
              assert.deepStrictEqual(turns[1]!.new_messages.map((m) => m.role), ['user']);
              assert.strictEqual(turns[1]!.new_messages[0]!.content, 'Wrong, try again.');
              if (r.transcript!.stop === 'completed') assert.strictEqual(turns[1]!.metrics.second_turn, 1);
              if (r.transcript!.stop === 'completed') assert.strictEqual(turns[1]!.reward, (turns[1]!.reply.content.length % 2 === 0 ? 1 : 0) + parse(turns[1]!), "the second step's reward is the env's");
            }
            assert.strictEqual(turns[0]!.reward, r.transcript!.stop === 'max_tokens' && turns.length === 1 ? -0.1 : (turns[0]!.reply.content.length % 2 === 0 ? 0.5 : 0) + parse(turns[0]!));
            const total = turns.reduce((s, t) => s + t.reward, 0);
            assert.ok(Math.abs(r.reward - total) < 1e-9, 'the record\'s reward is the sum of the step rewards');
            assert.strictEqual(r.completion_tokens.length, turns.reduce((s, t) => s + t.ac_tokens, 0));
          }
        }
        // arith-chat ends its replies on <|im_end|>: the env's second turn is reached
        assert.ok([0, 1].some((i) => samples(i).some((r) => r.transcript!.turns.length === 2)), 'some episode has two turns');
      });

      it('scores the episodes whose env raises 0, reports them with the error, and goes on', () => {
        const boom = samples(0).filter((r) => r.problem_id === 't:2');
        assert.strictEqual(boom.length, 3);
        for (const r of boom) {
          assert.strictEqual(r.reward, 0);
          assert.strictEqual(r.reward_error!.kind, 'exception');
          assert.match(r.reward_error!.message, /env boom on purpose/);
          assert.strictEqual(r.transcript!.stop, 'env_error');
        }
        const warnings = events.filter((e) => e.type === 'warning' && e.step === 0);
        assert.ok(warnings.some((w) => w.type === 'warning' && /3 of 6 train episodes failed in the environment and scored 0/.test(w.message) && /env boom on purpose/.test(w.message)), JSON.stringify(warnings));
        assert.match(fs.readFileSync(path.join(runDir, 'logs.log'), 'utf8'), /env boom on purpose/);
      });

      it('logs the cookbook\'s env/all/… metrics, the env\'s own per-step metric and reward/total, and test/… for the holdout episodes', () => {
        for (const line of readMetricsLines(runDir)) {
          for (const k of ['turns_per_episode', 'ac_tokens_per_turn', 'ob_tokens_per_turn', 'total_episodes', 'total_turns', 'total_ac_tokens', 'total_ob_tokens', 'reward/total', 'by_group/frac_mixed', 'by_group/frac_all_good', 'by_group/frac_all_bad', 'even'])
            assert.strictEqual(typeof line[`env/all/${k}`], 'number', `step ${line.step}: env/all/${k}`);
          assert.strictEqual(line['env/all/total_episodes'], 6);
          const recs = samples(line.step);
          const mean = recs.reduce((s, r) => s + r.reward, 0) / recs.length;
          assert.ok(Math.abs((line['env/all/reward/total'] as number) - mean) < 1e-9, 'reward/total is the mean total reward of the episodes');
          assert.strictEqual(line['env/all/total_turns'], recs.reduce((s, r) => s + r.transcript!.turns.length, 0));
          assert.strictEqual(line['test/env/all/total_episodes'], POOL.holdout.length);
          assert.strictEqual(samples(line.step, 'eval_test').length, POOL.holdout.length);
        }
      });

      it('sends forward_backward one datum per trajectory (each observation extends the last), advantage on exactly the sampled tokens', () => {
        const fb = calls.slice(from);
        assert.strictEqual(fb.length, 2, 'one forward_backward per iteration');
        for (const i of [0, 1]) {
          const recs = samples(i).filter((r) => r.completion_tokens.length > 0);
          const data = fb[i]!.data;
          assert.strictEqual(data.length, recs.length, `iteration ${i}: one datum per episode that sampled`);
          recs.forEach((r, k) => {
            const d = data[k]!;
            const turns = r.transcript!.turns;
            const last = turns.at(-1)!;
            assert.strictEqual(d.tokens.length, last.ob_tokens + last.ac_tokens - 1, 'the whole sequence of the last turn, shifted by one');
            const adv = d.lossFnInputs.advantages!.data;
            const targets = d.lossFnInputs.target_tokens!.data;
            const at = Array.from(adv.keys()).filter((j) => adv[j] !== 0);
            if (Math.abs(r.advantage) > 1e-6) {
              assert.strictEqual(at.length, r.completion_tokens.length, 'the advantage on every sampled token of every turn, and nowhere else');
              assert.deepStrictEqual(at.map((j) => targets[j]), r.completion_tokens, 'the sampled tokens, turn after turn');
              for (const j of at) assert.ok(Math.abs(adv[j]! - r.advantage) < 1e-6, 'the trajectory\'s advantage');
            } else assert.strictEqual(at.length, 0);
          });
        }
      });
    });
  }

  describe('the context cap', () => {
    it('takes the smaller of max_trajectory_tokens and the context length', () => {
      assert.strictEqual(trajectoryTokenLimit(undefined, undefined), undefined);
      assert.strictEqual(trajectoryTokenLimit(100, undefined), 100);
      assert.strictEqual(trajectoryTokenLimit(undefined, 256), 256);
      assert.strictEqual(trajectoryTokenLimit(1000, 256), 256);
      assert.strictEqual(trajectoryTokenLimit(128, 256), 128);
    });

    it('ends an episode whose next observation would pass the model\'s context with context_overflow_reward, even with a larger max_trajectory_tokens', async () => {
      const env = await open('cap.env.py', PY_ENV);
      const sampler = await service.createSamplingClient({ baseModel: ARITH_CHAT_MODEL });
      assert.strictEqual((await sampler.contextLength())?.length, 256, "arith-chat's context as the engine reports it");
      const params = { max_tokens: 8, temperature: 1, stop: stopParam(renderer.stopSequences()), seed: 3 };
      const limits: EpisodeLimits = { ...LIMITS, maxTokens: 8, maxTrajectoryTokens: 100_000 };
      const e = await runEpisode(env, { x: 1, y: 2, long: true }, sampler, renderer, params, limits);
      if (e.turns[0]!.stop_reason === 'length') assert.strictEqual(e.stop, 'max_tokens'); // cut off at max_tokens: the same reward, ended before the follow-up
      else {
        assert.strictEqual(e.stop, 'context_overflow');
        assert.strictEqual(e.turns.length, 1, 'the follow-up is never sampled');
        assert.strictEqual(e.turns[0]!.reward, -0.1);
        assert.strictEqual(e.turns[0]!.metrics.context_overflow, 1);
      }
      assert.strictEqual(e.transitions.reduce((s, t) => s + t.reward, 0), -0.1);
      // the same follow-up within the context, and no spec limit: the episode reaches its second turn's step
      const short = await runEpisode(env, { x: 1, y: 2 }, sampler, renderer, params, { ...LIMITS, maxTokens: 8 });
      assert.notStrictEqual(short.stop, 'context_overflow');
    });

    it('ends an episode whose first observation does not fit the context before sampling (the cookbook\'s InitialObservationOverflow)', async () => {
      const env = await open('cap0.env.py', PY_ENV);
      const sampler = await service.createSamplingClient({ baseModel: ARITH_CHAT_MODEL });
      const params = { max_tokens: 8, temperature: 1, stop: stopParam(renderer.stopSequences()) };
      const e = await runEpisode(env, { x: 1, y: 2, huge: true }, sampler, renderer, params, { ...LIMITS, maxTokens: 8 });
      assert.strictEqual(e.stop, 'max_tokens');
      assert.strictEqual(e.turns.length, 0, 'nothing sampled');
      assert.deepStrictEqual(e.transitions.map((t) => [t.reward, t.acTokens.length]), [[-0.1, 0]]);
      // sampling it directly is the client's context error
      await assert.rejects(sampler.sample(textInput(renderer.buildGenerationPrompt([{ role: 'user', content: 'x'.repeat(300) }])), params), /longer than the context/);
    });
  });

  describe('cancel and resume', () => {
    const resumeAndCheck = async (env: EnvRunner, writer: RunWriter, cfg: GrpoLoopConfig, keptSteps: number[]) => {
      assert.deepStrictEqual(readMetricsLines(writer.dir).map((l) => l.step), keptSteps);
      const resumePoint = readCheckpointLines(writer.dir);
      assert.deepStrictEqual(resumePoint.map((r) => [r.name, r.batch]), [[String(keptSteps.length).padStart(6, '0'), keptSteps.length]]);
      assert.ok(!fs.existsSync(path.join(writer.dir, `iteration_00000${keptSteps.length}`)), 'nothing of the dropped iteration was written');
      assertNoPartialLines(writer.dir);
      writer.close();
      const again = RunWriter.open(writer.dir);
      const events: RunEvent[] = [];
      const second = await runGrpo({ service, config: cfg, renderer, pool: POOL, env, envLimits: LIMITS, writer: again, resumeFrom: again.lastStateCheckpoint(), onEvent: (e) => events.push(e) });
      assert.strictEqual(second.status, 'completed', second.error);
      assert.deepStrictEqual(events[0], { type: 'started', runDir: writer.dir, runName: path.basename(writer.dir), model: ARITH_CHAT_MODEL, startStep: keptSteps.length, endStep: cfg.iterations, resumed: true });
      const steps = readMetricsLines(writer.dir).map((l) => l.step);
      assert.deepStrictEqual(steps, Array.from({ length: cfg.iterations }, (_, i) => i), 'every iteration once: none lost, none repeated');
      for (let i = 0; i < cfg.iterations; i++) {
        const recs = readJsonl(path.join(writer.dir, `iteration_00000${i}`, 'train_samples.jsonl')) as Rec[];
        assert.strictEqual(recs.length, cfg.groupsPerBatch * cfg.groupSize, `iteration ${i}: every episode once`);
        assert.ok(recs.every((r) => r.transcript && r.transcript.turns.length + (r.transcript.stop === 'env_error' ? 1 : 0) >= 1), `iteration ${i}: transcripts`);
      }
      assert.deepStrictEqual(readCheckpointLines(writer.dir).map((r) => r.name).at(-1), 'final');
      assertNoPartialLines(writer.dir);
    };

    it('cancelled between iterations: a resume point, and the resumed run continues with the next iteration', async () => {
      const env = await open('cancel.env.py', PY_ENV);
      const writer = RunWriter.create(path.join(dir, 'runs'), 'env-cancel');
      writer.writeConfig({ model_name: ARITH_CHAT_MODEL });
      const ac = new AbortController();
      const cfg = config({ iterations: 4, evalEvery: 0 });
      const first = await runGrpo({ service, config: cfg, renderer, pool: POOL, env, envLimits: LIMITS, writer, signal: ac.signal, onEvent: (e) => e.type === 'metrics' && e.step === 1 && ac.abort() });
      assert.strictEqual(first.status, 'cancelled');
      assert.strictEqual(first.iterationsRun, 2);
      await resumeAndCheck(env, writer, cfg, [0, 1]);
    });

    it('cancelled in the middle of an iteration\'s episodes: that iteration is dropped whole and redone on resume, by the same env workers', async () => {
      const env = await open('cancel-mid.env.mjs', JS_ENV);
      const writer = RunWriter.create(path.join(dir, 'runs'), 'env-cancel-mid');
      writer.writeConfig({ model_name: ARITH_CHAT_MODEL });
      const ac = new AbortController();
      const cfg = config({ iterations: 3, evalEvery: 0 });
      const first = await runGrpo({
        service,
        config: cfg,
        renderer,
        pool: POOL,
        env,
        envLimits: LIMITS,
        writer,
        signal: ac.signal,
        // some episodes of iteration 1 are done, others are between turns
        onEvent: (e) => e.type === 'phase' && e.step === 1 && e.phase === 'sampling' && (e.done ?? 0) >= 1 && ac.abort(),
      });
      assert.strictEqual(first.status, 'cancelled', first.error);
      assert.strictEqual(first.iterationsRun, 1);
      await resumeAndCheck(env, writer, cfg, [0]);
    });
  });
});
