// The extension details page of the packaged VSIX, dark theme: extension-details-dark.png.
import { detailsTests } from './details-steps.mjs';

/** The README's pictures served over https to a VSIX packaged to link them there (scripts/lib/readme-images.mjs). */
export const servedReadmeImages = true;

export const settings = { 'workbench.colorTheme': 'Default Dark Modern' };

/** Saved with the other screenshots (`npm run screenshots`): media/screenshots/extension-details-dark.jpg. */
export const readmeShots = { 'extension-details-dark': 'extension-details-dark' };

export const tests = detailsTests('-dark');
