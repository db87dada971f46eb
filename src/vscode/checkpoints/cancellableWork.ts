// Long checkpoint work (export, merge, publish) in a cancellable notification: one abort signal that
// follows Cancel, a scratch folder made on first use and removed at the end, and `undefined` when the
// user cancelled (a failure still throws, for the command's own error message).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';

export interface CancellableWork {
  progress: vscode.Progress<{ message?: string; increment?: number }>;
  signal: AbortSignal;
  /** a scratch folder under the OS temp dir (`tinker-<prefix>-…`), removed when the work ends */
  scratch(): Promise<string>;
  /** reports `message` and moves the bar to done/total of the work (the notification takes increments) */
  advance(message: string, done: number, total: number): void;
}

export async function withCancellableWork<T>(title: string, prefix: string, fn: (w: CancellableWork) => Promise<T>): Promise<T | undefined> {
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, async (progress, token) => {
    const ac = new AbortController();
    const sub = token.onCancellationRequested(() => ac.abort());
    let work: string | undefined;
    const scratch = async () => (work ??= await fs.promises.mkdtemp(path.join(os.tmpdir(), `tinker-${prefix}-`)));
    let last = 0;
    const advance = (message: string, done: number, total: number) => {
      const pct = (100 * done) / Math.max(1, total);
      progress.report({ message, increment: pct - last });
      last = pct;
    };
    try {
      return await fn({ progress, signal: ac.signal, scratch, advance });
    } catch (err) {
      if (ac.signal.aborted) return undefined;
      throw err;
    } finally {
      sub.dispose();
      if (work) await fs.promises.rm(work, { recursive: true, force: true });
    }
  });
}
