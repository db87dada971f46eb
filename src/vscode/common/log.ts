// The extension's log (an Output channel "Tinker"). Every message passes the Redactor first, so a key
// that reaches an error message never reaches the log.
import * as vscode from 'vscode';
import { Redactor } from '../../core/config/redact';
import { Disposable } from './lifecycle';
import { errorMessage } from '../../core/errors';

export class Log extends Disposable {
  private readonly channel: vscode.LogOutputChannel;

  /** `name` other than the extension's own 'Tinker' for a second log (disposing a log channel closes every channel of its name) */
  constructor(
    readonly redactor: Redactor,
    name = 'Tinker',
  ) {
    super();
    this.channel = this._register(vscode.window.createOutputChannel(name, { log: true }));
  }

  trace(message: string): void {
    this.channel.trace(this.redactor.redact(message));
  }

  info(message: string): void {
    this.channel.info(this.redactor.redact(message));
  }

  warn(message: string): void {
    this.channel.warn(this.redactor.redact(message));
  }

  error(message: string, err?: unknown): void {
    const detail = err !== undefined ? `: ${errorMessage(err)}` : '';
    this.channel.error(this.redactor.redact(message + detail));
  }

  show(): void {
    this.channel.show(true);
  }
}
