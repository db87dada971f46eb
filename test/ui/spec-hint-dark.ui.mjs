// Spec hints in the dark theme (steps in spec-hint-steps.mjs). Screenshots: spec-hint-dark, sweep-hint-dark.
import { specHintTests } from './spec-hint-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Dark Modern', 'files.autoSave': 'off' };

export const tests = specHintTests('dark');
