// Spec hints in the light theme (steps in spec-hint-steps.mjs). Screenshots: spec-hint-light, sweep-hint-light.
import { specHintTests } from './spec-hint-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern', 'files.autoSave': 'off' };

export const tests = specHintTests('light');
