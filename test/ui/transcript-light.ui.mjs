// An environment run's episodes in the group breakdown, in the light theme: episode-transcript-light.png,
// episode-parse-errors-light.png, episode-env-error-light.png, episode-diff-light.png.
import { transcriptTests } from './transcript-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

/** The screenshot the README shows (`npm run screenshots`): test screenshot → media/screenshots/<name>.jpg. */
export const readmeShots = { 'episode-transcript-light': 'episode-transcript' };

export const tests = transcriptTests('-light');
