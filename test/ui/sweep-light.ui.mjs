// Sweeps in the light theme: Start Sweep, the sweep node, Compare Runs and the sensitivity view
// (sweep-steps.mjs), with its screenshots.
import { sweepTests } from './sweep-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

/** The screenshots the README shows (`npm run screenshots`): test screenshot → media/screenshots/<name>.jpg. */
export const readmeShots = {
  'sweep-node': 'sweep-node',
  'compare-sweep': 'sweep-comparison',
  'compare-charts': 'compare-charts',
  'compare-table-charts': 'compare-table-charts',
};

export const tests = sweepTests('');
