// The Preference Pairs panel in the dark theme (steps in pairs-steps.mjs). Screenshot: pairs-dark.
import { pairsTests } from './pairs-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Dark Modern' };

export const tests = pairsTests('dark');
