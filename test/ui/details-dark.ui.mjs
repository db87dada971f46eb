// The extension details page of the packaged VSIX, dark theme: extension-details-dark.png.
import { detailsTests } from './details-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Dark Modern' };

/** Saved with the other screenshots (`npm run screenshots`): media/screenshots/extension-details-dark.jpg. */
export const readmeShots = { 'extension-details-dark': 'extension-details-dark' };

export const tests = detailsTests('-dark');
