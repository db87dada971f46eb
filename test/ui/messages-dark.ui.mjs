// A sample whose reply has reasoning and a tool call, in the dark theme: sample-thinking-folded-dark.png,
// sample-thinking-open-dark.png, sample-malformed-call-dark.png, sample-diff-parsed-reply-dark.png.
import { messageTests } from './messages-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Dark Modern' };

export const tests = messageTests('-dark');
