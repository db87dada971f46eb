// The ids of the commands the extension contributes (package.json contributes.commands), so that
// trees, status bars, CodeLenses and notifications name a command the same way its table does.
export const COMMAND = {
  selectBackend: 'tinker.selectBackend',
  setApiKey: 'tinker.setApiKey',
  clearApiKey: 'tinker.clearApiKey',
  forgetTrustedServers: 'tinker.forgetTrustedServers',
  openRunsFolder: 'tinker.openRunsFolder',
  refreshRuns: 'tinker.refreshRuns',
  copyCheckpointPath: 'tinker.copyCheckpointPath',
  showLog: 'tinker.showLog',
  showModels: 'tinker.showModels',
  openExample: 'tinker.openExample',
  startGrpoRun: 'tinker.startGrpoRun',
  startSftRun: 'tinker.startSftRun',
  resumeRun: 'tinker.resumeRun',
  cancelRun: 'tinker.cancelRun',
  openMetrics: 'tinker.openMetrics',
  showIteration: 'tinker.showIteration',
  compareSamples: 'tinker.compareSamples',
  newRewardFunction: 'tinker.newRewardFunction',
  dryRunReward: 'tinker.dryRunReward',
  showRewardExamples: 'tinker.showRewardExamples',
} as const;

export type CommandId = (typeof COMMAND)[keyof typeof COMMAND];
