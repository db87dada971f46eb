// Evaluation results in the light theme: eval-table-light.png (the table with intervals and the
// checkpoint curve), eval-matrix-light.png (the per-problem matrix), eval-diff-light.png (a cell's diff).
import { evalTests } from './eval-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

/** The screenshots the README shows (`npm run screenshots`): test screenshot → media/screenshots/<name>.jpg. */
export const readmeShots = { 'eval-table-light': 'eval-results', 'eval-matrix-light': 'eval-matrix', 'eval-diff-light': 'eval-diff' };

export const tests = evalTests('-light');
