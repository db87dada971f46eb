// Cost and budgets in the dark theme (same steps as cost-light.ui.mjs); screenshots end in -dark.
import { costSettings, costTests } from './cost-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Dark Modern', ...costSettings };

export const tests = costTests('-dark');
