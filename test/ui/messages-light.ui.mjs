// A sample whose reply has reasoning and a tool call, in the light theme: sample-thinking-folded-light.png,
// sample-thinking-open-light.png, sample-malformed-call-light.png, sample-diff-parsed-reply-light.png.
import { messageTests } from './messages-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

/** The screenshot the README shows (`npm run screenshots`): test screenshot → media/screenshots/<name>.jpg. */
export const readmeShots = { 'sample-thinking-folded-light': 'sample-tool-call' };

export const tests = messageTests('-light');
