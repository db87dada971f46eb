// The main job, in the light theme: the short arithmetic example through the command palette, then
// the metrics panel (also restored after a reload) and both trees. Screenshots: metrics-panel.png,
// metrics-panel-restored.png, runs-tree.png, checkpoints-tree.png, grpo-running.png; the group
// breakdown (runs-tree-iterations, breakdown-mixed-group, breakdown-token-view, sample-diff-best-worst,
// what-changed, doctor-finding); then the
// guided flow of quick picks (guided-model-pick.png, guided-run-completed.png).
import { grpoTests } from './grpo-steps.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

/** The screenshots the README shows (`npm run screenshots`): test screenshot → media/screenshots/<name>.jpg. */
export const readmeShots = {
  'metrics-panel': 'metrics',
  'checkpoints-tree': 'runs-and-checkpoints',
  'breakdown-mixed-group': 'group-breakdown',
  'what-changed': 'what-changed',
  'doctor-finding': 'run-doctor',
};

export const tests = grpoTests('', { guided: true });
