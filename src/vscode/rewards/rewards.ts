// Wires the reward-function editor: the index of reward files, inline validation, the CodeLens and
// hover, and the reward commands. extension.ts calls this once.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { TinkerConnection } from '../connection/connection';
import { Log } from '../common/log';
import { REWARD_SELECTOR, RewardCodeLensProvider } from './rewardCodeLens';
import { registerRewardCommands } from './rewardCommands';
import { RewardFileIndex } from '../common/rewardFiles';
import { RewardValidator } from './rewardValidation';
import { runsDirectory } from '../common/settings';

export interface RewardEditor {
  index: RewardFileIndex;
  validator: RewardValidator;
  lenses: RewardCodeLensProvider;
}

export function registerRewardEditor(context: vscode.ExtensionContext, log: Log, connection: TinkerConnection): { editor: RewardEditor; disposables: vscode.Disposable[] } {
  const runsFolder = () => runsDirectory(context.globalStorageUri);
  const index = new RewardFileIndex(log);
  const validator = new RewardValidator({ log, index, runsFolder });
  const lenses = new RewardCodeLensProvider(index, validator);
  const disposables: vscode.Disposable[] = [
    index,
    validator,
    lenses,
    vscode.languages.registerCodeLensProvider(REWARD_SELECTOR, lenses),
    vscode.languages.registerHoverProvider(REWARD_SELECTOR, lenses),
    ...registerRewardCommands({ log, index, validator, connection, runsFolder, cacheDir: path.join(context.globalStorageUri.fsPath, 'cache') }),
  ];
  return { editor: { index, validator, lenses }, disposables };
}
