// What an agent reads after DPO steps (the GRPO report's counterpart: grpo/agentReport.ts).
import { f3, lastValue, num, readStretch, signed, trendOf } from '../runs/stepFigures';
import { METRIC } from '../../protocol/metricKeys';

export interface DpoStepReport {
  run_dir: string;
  first_step: number;
  last_step: number;
  steps_done: number;
  steps_total: number;
  /** the last step's DPO loss, pair accuracy (share with ρ_chosen > ρ_rejected) and mean implicit reward margin */
  dpo_loss: number | null;
  accuracy: number | null;
  margin: number | null;
  chosen_reward: number | null;
  rejected_reward: number | null;
  /** mean DPO loss of the last (up to) 5 steps minus that of the 5 before (negative: learning) */
  dpo_loss_trend: number | null;
  /** the validation pairs' accuracy, margin and chosen NLL, when measured in the steps run */
  test_accuracy: number | null;
  test_margin: number | null;
  test_nll: number | null;
  learning_rate: number | null;
  seconds: number;
}

/** The report of DPO steps [firstStep, lastStep]. */
export function dpoStepReport(o: { runDir: string; firstStep: number; lastStep: number; stepsTotal: number }): DpoStepReport {
  const { all, ran, last, head, seconds } = readStretch(o);
  const losses = all.map((r) => num(r, 'dpo_loss')).filter((v): v is number => v !== null);
  return {
    ...head,
    steps_total: o.stepsTotal,
    dpo_loss: num(last, 'dpo_loss'),
    accuracy: num(last, 'accuracy'),
    margin: num(last, 'margin'),
    chosen_reward: num(last, 'chosen_reward'),
    rejected_reward: num(last, 'rejected_reward'),
    dpo_loss_trend: trendOf(losses),
    test_accuracy: lastValue(ran, 'test/accuracy'),
    test_margin: lastValue(ran, 'test/margin'),
    test_nll: lastValue(ran, METRIC.testNll),
    learning_rate: num(last, 'learning_rate'),
    seconds,
  };
}

export function dpoStepReportText(r: DpoStepReport): string {
  const steps = r.first_step === r.last_step ? `step ${r.last_step}` : `steps ${r.first_step}–${r.last_step}`;
  const lines = [
    `${steps} done (${r.steps_done}/${r.steps_total}), ${r.seconds.toFixed(1)} s`,
    `dpo_loss ${f3(r.dpo_loss)} (trend ${signed(r.dpo_loss_trend)}), pair accuracy ${f3(r.accuracy)}, margin ${signed(r.margin)} (chosen ${signed(r.chosen_reward)}, rejected ${signed(r.rejected_reward)}), lr ${r.learning_rate === null ? '–' : r.learning_rate.toExponential(2)}`,
  ];
  if (r.test_accuracy !== null) lines.push(`validation: accuracy ${f3(r.test_accuracy)}, margin ${signed(r.test_margin)}, chosen NLL ${f3(r.test_nll)}`);
  // the known DPO failure: both rewards falling, the rejected faster, while the chosen completions get less likely
  if (r.chosen_reward !== null && r.chosen_reward < 0 && r.rejected_reward !== null && r.rejected_reward < r.chosen_reward) lines.push('note: the chosen reward is negative too (both completions less likely than under the reference); watch the validation chosen NLL and held-out quality, and lower the learning rate or raise dpo_beta if it climbs');
  lines.push(`run directory: ${r.run_dir}`);
  return lines.join('\n');
}
