// W&B in the dark theme (same steps as wandb-light.ui.mjs); screenshots end in -dark.
import { wandbTests } from './wandb-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Dark Modern' };

export const tests = wandbTests('-dark');
