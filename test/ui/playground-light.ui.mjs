// The sample playground in the light theme: playground-light.png (both sides with rewards),
// playground-preference-light.png (the preference bar after "A better") and playground-diff-light.png (Compare A↔B).
import { playgroundTests } from './playground-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

/** The screenshot the README shows (`npm run screenshots`): test screenshot → media/screenshots/<name>.jpg. */
export const readmeShots = { 'playground-light': 'playground' };

export const tests = playgroundTests('-light');
