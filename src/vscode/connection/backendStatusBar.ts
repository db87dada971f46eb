// Status bar item naming the active backend; a click opens "Tinker: Select Backend".
import * as vscode from 'vscode';
import { ResolvedBackend, describeBackend } from '../../core/config/backendKinds';
import { Disposable } from '../common/lifecycle';
import { COMMAND } from '../common/commandIds';

export class BackendStatusItem extends Disposable {
  private readonly item = this._register(vscode.window.createStatusBarItem('tinker.backend', vscode.StatusBarAlignment.Left, 50));

  constructor() {
    super();
    this.item.name = 'Tinker Backend';
    this.item.command = COMMAND.selectBackend;
  }

  update(backend: ResolvedBackend | Error, hasKey: boolean): void {
    if (backend instanceof Error) {
      this.item.text = '$(warning) Tinker: settings error';
      this.item.tooltip = backend.message;
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    } else {
      const keyNote = backend.kind === 'cloud' && !hasKey ? ' $(key) no API key' : '';
      this.item.text = `$(beaker) Tinker: ${describeBackend(backend)}${keyNote}`;
      this.item.tooltip = `Backend: ${describeBackend(backend)}${backend.kind !== 'local' ? ` (${backend.baseUrl})` : ''}. Click to change.`;
      this.item.backgroundColor = keyNote ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    }
    this.item.show();
  }
}
