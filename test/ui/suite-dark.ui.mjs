// The agreed eval suite in the dark theme: suite-table-dark.png and suite-compare-dark.png.
import { suiteTests } from './suite-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Dark Modern' };

export const tests = suiteTests('-dark');
