// The training half of a GRPO iteration: group-centred advantages → the cookbook's datums → one
// forward_backward and one optim_step submitted back to back (the service runs them in order, so the
// trainer log-probs are those of the weights that sampled) → the sample/train KL metrics.
import { computeAdvantages, isConstantGroup } from '../rollouts/advantages';
import { RLDatum, sampleTrainKl, trajectoryToDatum } from '../rollouts/datums';
import type { RolloutGroup, ScoredRollout } from '../rollouts/rollout';
import type { SpanTimer } from '../runs/spanTimer';
import type { TrainingClient } from '../tinker/client';
import { Datum, LossFnType, textInput } from '../tinker/types';
import { COOKBOOK_ADAM } from '../tinker/adam';
import { METRIC } from '../../protocol/metricKeys';

/** A datum on the wire: the mask stays local (prompt positions are masked by advantage 0). */
export function toWireDatum(d: RLDatum): Datum {
  return {
    model_input: textInput(d.modelInput),
    loss_fn_inputs: {
      target_tokens: { dtype: 'int64', data: d.targetTokens },
      logprobs: { dtype: 'float32', data: d.logprobs },
      advantages: { dtype: 'float32', data: d.advantages },
    },
  };
}

/** Keeps the groups that carry a learning signal; if none does, the first group alone (as the cookbook). */
export function removeConstantRewardGroups<G extends RolloutGroup<ScoredRollout>>(groups: readonly G[]): G[] {
  const kept = groups.filter((g) => !isConstantGroup(g.rollouts.map((r) => r.reward)));
  return kept.length > 0 ? kept : groups.slice(0, 1);
}

export interface BatchDatums {
  /** advantages_P_G, aligned with the groups' rollouts */
  advantages: number[][];
  /** datums in group order, then trajectory order */
  datums: RLDatum[];
  /** the group and trajectory of each datum (an empty completion makes none) */
  origin: Array<{ group: number; traj: number }>;
}

export function buildDatums(groups: readonly RolloutGroup<ScoredRollout>[]): BatchDatums {
  const advantages = computeAdvantages(groups.map((g) => g.rollouts.map((r) => r.reward)));
  const datums: RLDatum[] = [];
  const origin: BatchDatums['origin'] = [];
  groups.forEach((g, p) =>
    g.rollouts.forEach((r, t) => {
      // an empty completion has no action token to train on (its reward still counted in the mean)
      if (r.tokens.length > 0) {
        datums.push(trajectoryToDatum(g.promptTokens, r.tokens, r.logprobs, advantages[p]![t]!));
        origin.push({ group: p, traj: t });
      }
    }),
  );
  return { advantages, datums, origin };
}

export interface TrainStepOptions {
  lossFn: LossFnType;
  lossFnConfig?: Record<string, number>;
  learningRate: number;
  /** stops waiting (the server went away); a user cancel lets the step finish */
  signal?: AbortSignal;
}

/** forward_backward and optim_step back to back; returns the optimizer's metrics merged with the KL metrics. */
export async function trainStep(tc: TrainingClient, datums: readonly RLDatum[], o: TrainStepOptions, timer?: SpanTimer): Promise<Record<string, number>> {
  if (datums.length === 0) throw new Error('no datum to train on');
  const t0 = performance.now();
  const fbSubmitted = tc.forwardBackward(datums.map(toWireDatum), o.lossFn, o.lossFnConfig, o.signal);
  const optSubmitted = tc.optimStep({ learning_rate: o.learningRate, ...COOKBOOK_ADAM }, o.signal);
  const [fb, opt] = await Promise.all([fbSubmitted, optSubmitted]);
  // the service runs them in order: forward_backward's span ends with its result, optim_step's after it
  let fbDone = t0;
  const [out, optResult] = await Promise.all([fb.result(o.signal).finally(() => (fbDone = performance.now())), opt.result(o.signal)]);
  timer?.add('forward_backward', (fbDone - t0) / 1000);
  timer?.add('optim_step', (performance.now() - fbDone) / 1000);
  const trainLogprobs = out.loss_fn_outputs.map((x, i) => {
    const lp = x['logprobs'];
    if (!lp) throw new Error(`forward_backward returned no logprobs for datum ${i}`);
    return lp.data;
  });
  const kl = sampleTrainKl(datums, trainLogprobs);
  return {
    ...(optResult.metrics ?? {}),
    [METRIC.klV1]: kl.kl_sample_train_v1,
    [METRIC.klV2]: kl.kl_sample_train_v2,
    [METRIC.entropy]: kl.entropy,
  };
}
