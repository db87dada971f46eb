// Distillation in the dark theme (same steps as distill-light.ui.mjs); screenshots end in -dark.
import { distillTests } from './distill-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Dark Modern' };

export const tests = distillTests('-dark');
