// The GRPO loop's pure parts against hand-computed cases: trajectory metrics (token counts,
// frac_truncated, means over the dicts that have a key), span-timing aggregates, reward attachment,
// constant-group removal, datums on the wire, batches, rollout summaries.
import * as assert from 'assert';
import type { Problem } from '../../../src/core/data/types';
import { batchProblems } from '../../../src/core/grpo/loop';
import { checkpointName } from '../../../src/core/runs/loopRuntime';
import { prefixKeys, trajectoryMetrics, TrajectoryStats } from '../../../src/core/rollouts/metrics';
import { rolloutSummaries } from '../../../src/core/rollouts/records';
import { RolloutGroup, ScoredRollout, attachRewards, stepMetrics, stopParam } from '../../../src/core/rollouts/rollout';
import { SpanTimer } from '../../../src/core/runs/spanTimer';
import { buildDatums, removeConstantRewardGroups, toWireDatum } from '../../../src/core/grpo/trainStep';
import { COOKBOOK_ADAM } from '../../../src/core/tinker/adam';
import type { ParsedResponse } from '../../../src/core/render/types';
import { TRAJECTORY_KEYS } from './metricKeys';

const t = (obTokens: number, acTokens: number, reward: number, truncated = false, metrics: Record<string, number> = {}): TrajectoryStats => ({ obTokens, acTokens, reward, truncated, metrics });
const problem = (id: string): Problem => ({ id, messages: [{ role: 'user', content: id }], groundTruth: '1' });
const response = (termination: ParsedResponse['termination']): ParsedResponse => ({ message: { role: 'assistant', content: 'x' }, termination });

function scored(promptTokens: number[], rewards: number[], tokens: number[][] = rewards.map(() => [7, 8])): RolloutGroup<ScoredRollout> {
  return {
    problem: problem(`p${promptTokens.join('')}`),
    promptTokens,
    rollouts: rewards.map((reward, k) => ({
      tokens: tokens[k]!,
      logprobs: tokens[k]!.map(() => -0.5),
      stopReason: 'stop' as const,
      response: response('stop_sequence'),
      reward,
      metrics: stepMetrics(response('stop_sequence'), reward),
    })),
  };
}

describe('GRPO trajectory metrics', () => {
  it('counts tokens, turns and episodes and averages the reward over trajectories', () => {
    // group A: prompts of 10 tokens, actions 3 and 5; group B: prompts of 4 tokens, actions 2 and 2 (one cut off)
    const m = trajectoryMetrics([
      [t(10, 3, 1), t(10, 5, 0)],
      [t(4, 2, 1, true), t(4, 2, 1)],
    ]);
    assert.strictEqual(m['env/all/total_episodes'], 4);
    assert.strictEqual(m['env/all/total_turns'], 4);
    assert.strictEqual(m['env/all/turns_per_episode'], 1);
    assert.strictEqual(m['env/all/total_ac_tokens'], 12);
    assert.strictEqual(m['env/all/total_ob_tokens'], 28);
    assert.strictEqual(m['env/all/ac_tokens_per_turn'], 3);
    assert.strictEqual(m['env/all/ob_tokens_per_turn'], 7);
    assert.strictEqual(m['env/all/reward/total'], 0.75);
    assert.strictEqual(m['env/all/frac_truncated'], 0.25);
    assert.strictEqual(m['env/all/by_group/frac_mixed'], 0.5);
    assert.strictEqual(m['env/all/by_group/frac_all_good'], 0.5);
    assert.strictEqual(m['env/all/by_group/frac_all_bad'], 0);
  });

  it('keeps the cookbook key order: totals, reward, step metrics, frac_truncated, by_group', () => {
    const keys = Object.keys(trajectoryMetrics([[t(1, 1, 0, false, { format: 1, correct: 0 })]]));
    assert.deepStrictEqual(keys, TRAJECTORY_KEYS);
  });

  it('averages a step metric over the trajectories that report it (missing is not zero)', () => {
    const m = trajectoryMetrics([[t(1, 1, 0, false, { format: 1 }), t(1, 1, 0, false, { format: 0, extra: 4 }), t(1, 1, 0)]]);
    assert.strictEqual(m['env/all/format'], 0.5);
    assert.strictEqual(m['env/all/extra'], 4);
  });

  it('prefixes the evaluator metrics with test/', () => {
    const m = prefixKeys(trajectoryMetrics([[t(5, 2, 1)], [t(5, 4, 0)]]), 'test');
    assert.strictEqual(m['test/env/all/reward/total'], 0.5);
    assert.strictEqual(m['test/env/all/by_group/frac_all_good'], 0.5);
    assert.strictEqual(m['test/env/all/by_group/frac_mixed'], 0, 'groups of one sample are never mixed');
  });

  it('derives format from the stop sequence and correct from reward ≥ 0.5', () => {
    assert.deepStrictEqual(stepMetrics(response('stop_sequence'), 1), { format: 1, correct: 1 });
    assert.deepStrictEqual(stepMetrics(response('malformed'), 0.5), { format: 0, correct: 1 });
    assert.deepStrictEqual(stepMetrics(response('eos'), 0.49), { format: 0, correct: 0 });
  });
});

describe('GRPO span timings', () => {
  it('gives time/<span> for a span seen once and :total/:count/:mean/:max for repeated spans', async () => {
    let clock = 0;
    const timer = new SpanTimer(() => clock);
    await timer.time('sampling', async () => {
      clock += 2;
    });
    timer.add('env_step', 0.5);
    timer.add('env_step', 1.5);
    timer.add('env_step', 1);
    assert.deepStrictEqual(timer.metrics(), {
      'time/sampling': 2,
      'time/env_step:total': 3,
      'time/env_step:count': 3,
      'time/env_step:mean': 1,
      'time/env_step:max': 1.5,
    });
  });

  it('lists the timed spans with wall times from the earliest start, for timing_spans.jsonl', async () => {
    let clock = 100;
    const timer = new SpanTimer(() => clock);
    await timer.time('outer', async () => {
      clock += 1;
      await timer.time('inner', async () => {
        clock += 2;
      });
      clock += 0.5;
    });
    assert.deepStrictEqual(timer.timingSpans(), [
      { name: 'inner', duration: 2, wall_start: 1, wall_end: 3 },
      { name: 'outer', duration: 3.5, wall_start: 0, wall_end: 3.5 },
    ]);
  });

  it('records a span that throws', async () => {
    let clock = 10;
    const timer = new SpanTimer(() => clock);
    await assert.rejects(
      timer.time('train_step', async () => {
        clock += 0.25;
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.deepStrictEqual(timer.metrics(), { 'time/train_step': 0.25 });
  });
});

describe('GRPO rewards, groups and datums', () => {
  it('attaches reward outcomes in rollout order; a failed reward scores 0 and keeps its error', () => {
    const g = scored([1, 2], [0, 0]);
    const groups = [{ ...g, rollouts: g.rollouts.slice(0, 1) }, g];
    const out = attachRewards(groups, [
      { ok: true, reward: 1, durationMs: 1 },
      { ok: false, reward: 0, error: { kind: 'exception', message: 'ZeroDivisionError', line: 3 }, durationMs: 1 },
      { ok: true, reward: 0.25, durationMs: 1 },
    ]);
    assert.deepStrictEqual(out.map((x) => x.rollouts.map((r) => r.reward)), [[1], [0, 0.25]]);
    assert.strictEqual(out[1]!.rollouts[0]!.rewardError?.line, 3);
    assert.strictEqual(out[0]!.rollouts[0]!.metrics.correct, 1);
    assert.throws(() => attachRewards(groups, []), /fewer outcomes/);
  });

  it('keeps constant groups by default with zero advantage; removal keeps mixed groups, or the first if none is', () => {
    const mixed = scored([1], [1, 0]);
    const allGood = scored([2], [1, 1]);
    const allBad = scored([3], [0, 0]);
    const { advantages } = buildDatums([mixed, allGood]);
    assert.deepStrictEqual(advantages, [[0.5, -0.5], [0, 0]]);
    assert.deepStrictEqual(removeConstantRewardGroups([allGood, mixed, allBad]), [mixed]);
    assert.deepStrictEqual(removeConstantRewardGroups([allBad, allGood]), [allBad]);
  });

  it('builds one datum per trajectory with zero advantage on prompt positions, mask not sent', () => {
    const { datums } = buildDatums([scored([1, 2, 3], [1, 0], [[10, 11], [12]])]);
    assert.strictEqual(datums.length, 2);
    assert.deepStrictEqual(datums[0]!.modelInput, [1, 2, 3, 10]);
    assert.deepStrictEqual(datums[0]!.targetTokens, [2, 3, 10, 11]);
    assert.deepStrictEqual(Array.from(datums[0]!.advantages), [0, 0, 0.5, 0.5]);
    assert.deepStrictEqual(Array.from(datums[1]!.advantages), [0, 0, -0.5]);
    assert.deepStrictEqual(Array.from(datums[1]!.logprobs), [0, 0, -0.5]);
    const wire = toWireDatum(datums[0]!);
    assert.deepStrictEqual(Object.keys(wire.loss_fn_inputs).sort(), ['advantages', 'logprobs', 'target_tokens']);
    assert.strictEqual(wire.loss_fn_inputs.target_tokens!.dtype, 'int64');
    assert.deepStrictEqual(COOKBOOK_ADAM, { beta1: 0.9, beta2: 0.95, eps: 1e-8 });
  });

  it('reads the train pool cyclically, P problems per batch, the same for the same step', () => {
    const train = ['a', 'b', 'c', 'd', 'e'].map(problem);
    assert.deepStrictEqual(batchProblems(train, 0, 2).map((p) => p.id), ['a', 'b']);
    assert.deepStrictEqual(batchProblems(train, 2, 2).map((p) => p.id), ['e', 'a']);
    assert.deepStrictEqual(batchProblems(train, 1, 7).map((p) => p.id), ['c', 'd', 'e', 'a', 'b', 'c', 'd']);
    assert.throws(() => batchProblems([], 0, 2), /train split is empty/);
  });

  it('names checkpoints by step, six digits', () => {
    assert.strictEqual(checkpointName(20), '000020');
    assert.strictEqual(checkpointName(0), '000000');
  });

  it('passes stop strings or stop token ids as the renderer gives them', () => {
    assert.deepStrictEqual(stopParam({ kind: 'strings', strings: ['\n\nUser:'] }), ['\n\nUser:']);
    assert.deepStrictEqual(stopParam({ kind: 'tokens', tokens: [258] }), [258]);
  });

  it('writes rollout summaries with the cookbook schema (no text, no token ids)', () => {
    const [s] = rolloutSummaries('train', 4, [scored([1, 2, 3], [1])]);
    assert.deepStrictEqual(s, {
      schema_version: 1,
      split: 'train',
      iteration: 4,
      group_idx: 0,
      traj_idx: 0,
      tags: ['problems'],
      sampling_client_step: 4,
      total_reward: 1,
      final_reward: 0,
      trajectory_metrics: {},
      steps: [{ step_idx: 0, ob_len: 3, ac_len: 2, reward: 1, episode_done: true, metrics: { format: 1, correct: 1 }, logs: {} }],
      final_ob_len: 0,
    });
  });
});
