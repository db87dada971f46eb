// Play as the Model in the light theme: env-play-retry-light.png (after a wrong reply, the env's
// "Wrong, try again." turn awaiting the next) and env-play-light.png (the episode done, reward 0.5).
import { envPlayTests } from './envplay-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

/** The screenshot the README shows (`npm run screenshots`): test screenshot → media/screenshots/<name>.jpg. */
export const readmeShots = { 'env-play-light': 'env-play' };

export const tests = envPlayTests('-light');
