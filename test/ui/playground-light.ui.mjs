// The sample playground in the light theme: playground-light.png (both sides with rewards) and
// playground-diff-light.png (Compare A↔B).
import { playgroundTests } from './playground-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

export const tests = playgroundTests('-light');
