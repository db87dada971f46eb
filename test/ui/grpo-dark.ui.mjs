// The main job, in the dark theme (same steps as grpo-light.ui.mjs); screenshots end in -dark.
import { grpoTests } from './grpo-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Dark Modern' };

export const tests = grpoTests('-dark');
