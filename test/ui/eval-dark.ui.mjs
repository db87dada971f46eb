// Evaluation results in the dark theme: eval-table-dark.png, eval-matrix-dark.png, eval-diff-dark.png.
import { evalTests } from './eval-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Dark Modern' };

export const tests = evalTests('-dark');
