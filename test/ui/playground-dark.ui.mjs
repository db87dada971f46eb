// The sample playground in the dark theme: playground-dark.png (both sides with rewards),
// playground-preference-dark.png (the preference bar after "A better") and playground-diff-dark.png (Compare A↔B).
import { playgroundTests } from './playground-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Dark Modern' };

export const tests = playgroundTests('-dark');
