// The Preference Pairs panel in the light theme (steps in pairs-steps.mjs). Screenshot: pairs-light.
import { pairsTests } from './pairs-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

export const tests = pairsTests('light');
