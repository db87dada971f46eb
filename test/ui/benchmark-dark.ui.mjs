// A public benchmark in the Eval Results panel, dark theme (same steps as benchmark-light.ui.mjs).
import { benchmarkTests } from './benchmark-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Dark Modern' };

export const tests = benchmarkTests('-dark');
