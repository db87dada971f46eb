// The start flows' cost estimate (runs, sweeps, evals): the whole job's estimated cost, from its
// shapes and the price table in force, in the log and the status bar; above tinker.confirmCostAboveUsd,
// a confirmation before anything starts (through the window seam, which the host tests answer).
import * as vscode from 'vscode';
import type { CostEstimate } from '../../core/cost/estimate';
import { errorMessage } from '../../core/errors';
import { confirmCostAboveUsdSetting } from './settings';
import { windowUi } from './windowUi';

/** The confirmation's button. */
export const START_ANYWAY = 'Start';

/**
 * Estimates the job and asks when it is above the threshold; true when it may start. An estimate that
 * cannot be made (a dataset not readable yet) is logged and does not block: the start says what is wrong.
 */
export async function confirmJobCost(estimate: () => Promise<CostEstimate | undefined>, log: { info(m: string): void; warn(m: string): void }): Promise<boolean> {
  let e: CostEstimate | undefined;
  try {
    e = await estimate();
  } catch (err) {
    log.warn(`no cost estimate: ${errorMessage(err)}`);
    return true;
  }
  if (!e) return true;
  const { estimateHeadline, estimateLines, needsCostConfirmation } = await import('../../core/cost/estimate');
  for (const line of estimateLines(e)) log.info(line);
  const threshold = confirmCostAboveUsdSetting();
  if (!needsCostConfirmation(e, threshold)) {
    vscode.window.setStatusBarMessage(`$(credit-card) ${estimateHeadline(e)}`, 15_000);
    return true;
  }
  const answer = await windowUi.showWarningMessage(`${estimateHeadline(e)}, above tinker.confirmCostAboveUsd ($${threshold}). ${e.assumptions[0] ?? ''}. Start it?`, START_ANYWAY);
  if (answer !== START_ANYWAY) log.info('not started: the estimated cost was not confirmed');
  return answer === START_ANYWAY;
}
