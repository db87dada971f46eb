// The agreed eval suite in the light theme: suite-table-light.png (one checkpoint's result by layer)
// and suite-compare-light.png (Compare Suites with the gate's verdicts).
import { suiteTests } from './suite-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

/** The screenshots the README shows (`npm run screenshots`): test screenshot → media/screenshots/<name>.jpg. */
export const readmeShots = { 'suite-table-light': 'suite-results', 'suite-compare-light': 'suite-compare' };

export const tests = suiteTests('-light');
