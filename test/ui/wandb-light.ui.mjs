// W&B in the light theme: the key typed into the password box, an SFT run logging to the W&B
// stand-in, and the link in the metrics panel header, the Runs view tooltip and the comparison
// table (wandb-steps.mjs). Screenshots: wandb-metrics-header, wandb-runs-tooltip, wandb-compare-table.
import { wandbTests } from './wandb-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

/** The screenshots the README shows (`npm run screenshots`): test screenshot → media/screenshots/<name>.jpg. */
export const readmeShots = {
  'wandb-runs-tooltip': 'wandb-link',
};

export const tests = wandbTests('');
