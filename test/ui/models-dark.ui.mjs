// The model registry in the dark theme: models-view-dark.png, model-card-dark.png, model-promote-refused-dark.png.
import { modelsTests } from './models-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Dark Modern' };

export const tests = modelsTests('-dark');
