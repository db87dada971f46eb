// Sweeps in the dark theme (same steps as sweep-light.ui.mjs); screenshots end in -dark.
import { sweepTests } from './sweep-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Dark Modern' };

export const tests = sweepTests('-dark');
