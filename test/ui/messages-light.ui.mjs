// A sample whose reply has reasoning and a tool call, in the light theme: sample-thinking-folded-light.png,
// sample-thinking-open-light.png, sample-malformed-call-light.png, sample-diff-parsed-reply-light.png.
import { messageTests } from './messages-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

export const tests = messageTests('-light');
