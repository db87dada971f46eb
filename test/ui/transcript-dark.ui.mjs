// An environment run's episodes in the group breakdown, in the dark theme: episode-transcript-dark.png,
// episode-parse-errors-dark.png, episode-env-error-dark.png, episode-diff-dark.png.
import { transcriptTests } from './transcript-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Dark Modern' };

export const tests = transcriptTests('-dark');
