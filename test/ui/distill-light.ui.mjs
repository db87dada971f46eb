// Distillation in the light theme: the short distill-arithmetic through the palette, the KL-to-the-
// teacher chart, the breakdown's KL shading and Compare Runs (distill-steps.mjs), with screenshots.
import { distillTests } from './distill-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

/** The screenshots the README shows (`npm run screenshots`): test screenshot → media/screenshots/<name>.jpg. */
export const readmeShots = {
  'distill-kl-shading': 'distill-kl-shading',
  'distill-compare-step': 'distill-compare',
};

export const tests = distillTests('');
