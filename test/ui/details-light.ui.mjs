// The extension details page of the packaged VSIX, light theme: extension-details-light.png.
import { detailsTests } from './details-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

/** Saved with the other screenshots (`npm run screenshots`): media/screenshots/extension-details-light.jpg. */
export const readmeShots = { 'extension-details-light': 'extension-details-light' };

export const tests = detailsTests('-light');
