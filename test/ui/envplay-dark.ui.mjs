// Play as the Model in the dark theme: env-play-retry-dark.png and env-play-dark.png.
import { envPlayTests } from './envplay-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Dark Modern' };

export const tests = envPlayTests('-dark');
