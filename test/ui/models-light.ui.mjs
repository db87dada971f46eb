// The model registry in the light theme: models-view-light.png (the Models view by status),
// model-card-light.png (a version's card), model-promote-refused-light.png (the gate's refusal).
import { modelsTests } from './models-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

/** The screenshots the README shows (`npm run screenshots`): test screenshot → media/screenshots/<name>.jpg. */
export const readmeShots = { 'model-card-light': 'model-card' };

export const tests = modelsTests('-light');
