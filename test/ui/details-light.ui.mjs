// The extension details page of the packaged VSIX, light theme: extension-details-light.png.
import { detailsTests } from './details-steps.mjs';

/** The README's pictures served over https to a VSIX packaged to link them there (scripts/lib/readme-images.mjs). */
export const servedReadmeImages = true;

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

/** Saved with the other screenshots (`npm run screenshots`): media/screenshots/extension-details-light.jpg. */
export const readmeShots = { 'extension-details-light': 'extension-details-light' };

export const tests = detailsTests('-light');
