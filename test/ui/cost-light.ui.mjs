// Cost and budgets in the light theme: a budget stop's warning and the metrics panel's cost chart
// (cost-steps.mjs). Screenshots: budget-stop.png, cost-chart.png.
import { costSettings, costTests } from './cost-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern', ...costSettings };

/** The screenshots the README shows (`npm run screenshots`): test screenshot → media/screenshots/<name>.jpg. */
export const readmeShots = { 'cost-chart': 'cost' };

export const tests = costTests('');
