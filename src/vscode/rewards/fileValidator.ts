// What inline validation of user code files (reward files, environment files) shares: a file is
// validated while typing (500 ms after the last change, a newer edit cancelling the run in flight),
// on open and on save; granting workspace trust re-validates; closing a file stops its work. The
// subclass says which files it validates and how (`run`), and publishes its diagnostics.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Disposable, toDisposable } from '../common/lifecycle';
import type { Log } from '../common/log';
import { errorMessage } from '../../core/errors';

export const DEBOUNCE_MS = 500;

export interface TrustSource {
  readonly isTrusted: boolean;
  readonly onDidGrant: vscode.Event<void>;
}

export const workspaceTrust: TrustSource = {
  get isTrusted() {
    return vscode.workspace.isTrusted;
  },
  onDidGrant: vscode.workspace.onDidGrantWorkspaceTrust,
};

export abstract class FileValidator extends Disposable {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inFlight = new Map<string, AbortController>();
  private toldUntrusted = false;

  constructor(
    protected readonly log: Log,
    protected readonly trust: TrustSource,
    /** names the files in log lines ("reward", "environment") */
    private readonly what: string,
  ) {
    super();
    this._registerAll(
      vscode.workspace.onDidOpenTextDocument((d) => this.schedule(d.uri, 0)),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length > 0) this.schedule(e.document.uri, DEBOUNCE_MS);
      }),
      vscode.workspace.onDidSaveTextDocument((d) => this.schedule(d.uri, 0)),
      vscode.workspace.onDidCloseTextDocument((d) => this.forget(d.uri)),
      this.trust.onDidGrant(() => this.revalidateOpen()),
    );
    // work still scheduled or running for a file stops first
    this._register(
      toDisposable(() => {
        for (const t of this.timers.values()) clearTimeout(t);
        for (const c of this.inFlight.values()) c.abort();
      }),
    );
  }

  /** The files to validate when `uri` changed (itself, or the files that read it). */
  protected abstract targetsOf(uri: vscode.Uri): vscode.Uri[];
  /** Validates `uri` now and publishes the result; `signal` aborts when a newer edit came. */
  protected abstract run(uri: vscode.Uri, signal: AbortSignal): Promise<void>;

  /** Validates every open file now. */
  revalidateOpen(): void {
    for (const d of vscode.workspace.textDocuments) this.schedule(d.uri, 0);
  }

  /** Validates the files `uri` concerns after `delayMs`. */
  schedule(uri: vscode.Uri, delayMs: number): void {
    if (uri.scheme !== 'file') return;
    for (const target of this.targetsOf(uri)) {
      const key = target.toString();
      clearTimeout(this.timers.get(key));
      // a newer edit makes the run in flight stale
      this.inFlight.get(key)?.abort();
      this.timers.set(
        key,
        setTimeout(() => {
          this.timers.delete(key);
          void this.validate(target);
        }, delayMs),
      );
    }
  }

  private forget(uri: vscode.Uri): void {
    const key = uri.toString();
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
    this.inFlight.get(key)?.abort();
  }

  /** The editor's text of `file` when it is open (with its version), else the file on disk. */
  protected async textOf(file: string): Promise<{ text: string; version?: number } | undefined> {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === file);
    if (open) return { text: open.getText(), version: open.version };
    try {
      return { text: await fs.readFile(file, 'utf8') };
    } catch {
      return undefined;
    }
  }

  /** Validates a file now (cancelling its run in flight). */
  async validate(uri: vscode.Uri): Promise<void> {
    const key = uri.toString();
    this.inFlight.get(key)?.abort();
    const controller = new AbortController();
    this.inFlight.set(key, controller);
    const signal = controller.signal;
    try {
      await this.run(uri, signal);
    } catch (err) {
      if (signal.aborted) return;
      this.log.warn(`validating ${this.what} file ${path.basename(uri.fsPath)} failed: ${errorMessage(err)}`);
    } finally {
      if (this.inFlight.get(key) === controller) this.inFlight.delete(key);
    }
  }

  /** Says once per window why code is not run, with the way to trust the workspace. */
  protected tellUntrusted(message: string): void {
    if (this.toldUntrusted) return;
    this.toldUntrusted = true;
    void vscode.window.showInformationMessage(message, 'Manage Workspace Trust').then((pick) => {
      if (pick) void vscode.commands.executeCommand('workbench.trust.manage');
    });
  }
}
