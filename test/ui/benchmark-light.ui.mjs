// A public benchmark (GSM8K, from the datasets-server stand-in) in the Eval Results panel, light theme
// (benchmark-steps.mjs). Screenshot: benchmark-eval-light.png.
import { benchmarkTests } from './benchmark-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

/** The screenshots the README shows (`npm run screenshots`): test screenshot → media/screenshots/<name>.jpg. */
export const readmeShots = { 'benchmark-eval-light': 'benchmark-eval' };

export const tests = benchmarkTests('-light');
