// What an agent reads after SFT steps (the GRPO report's counterpart: grpo/agentReport.ts).
import { f3, lastValue, mean, num, readStretch, signed, trendOf } from '../runs/stepFigures';
import { METRIC } from '../../protocol/metricKeys';

export interface SftStepReport {
  run_dir: string;
  first_step: number;
  last_step: number;
  steps_done: number;
  train_mean_nll: number | null;
  /** mean train NLL of the last (up to) 5 steps minus that of the 5 before (negative: learning) */
  train_nll_trend: number | null;
  /** the last validation NLL of the steps run, when one was measured */
  test_nll: number | null;
  learning_rate: number | null;
  seconds: number;
}

/** The report of SFT steps [firstStep, lastStep]. */
export function sftStepReport(o: { runDir: string; firstStep: number; lastStep: number }): SftStepReport {
  const { all, ran, last, head, seconds } = readStretch(o);
  const nll = all.map((r) => num(r, METRIC.trainNll)).filter((v): v is number => v !== null);
  return {
    ...head,
    train_mean_nll: mean(ran.map((r) => num(r, METRIC.trainNll)).filter((v): v is number => v !== null)),
    train_nll_trend: trendOf(nll),
    test_nll: lastValue(ran, METRIC.testNll),
    learning_rate: num(last, 'learning_rate'),
    seconds,
  };
}

export function sftStepReportText(r: SftStepReport): string {
  const steps = r.first_step === r.last_step ? `step ${r.last_step}` : `steps ${r.first_step}–${r.last_step}`;
  return [
    `${steps} done (${r.steps_done} so far), ${r.seconds.toFixed(1)} s`,
    `train NLL ${f3(r.train_mean_nll)} (trend ${signed(r.train_nll_trend)})${r.test_nll !== null ? `, validation NLL ${f3(r.test_nll)}` : ''}, lr ${r.learning_rate === null ? '–' : r.learning_rate.toExponential(2)}`,
    `run directory: ${r.run_dir}`,
  ].join('\n');
}
