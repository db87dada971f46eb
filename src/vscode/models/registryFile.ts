// The workspace's model registry file (tinker-models.json at the first workspace folder's root) as
// the Models view and the model cards see it: read through the core (zod-parsed), and an event when it
// changes, whoever wrote it (this window, another window, the CLI): a file watcher, plus this
// window's own writes, which fire at once.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Registry } from '../../core/models/registry';
import { Disposable } from '../common/lifecycle';

export class ModelRegistryFile extends Disposable {
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  /** the registry file (or MODELS.md) changed on disk */
  readonly onDidChange = this.changed.event;
  private watcher: vscode.Disposable | undefined;
  private watching: string | undefined;

  constructor(private readonly override?: string) {
    super();
    this._register(vscode.workspace.onDidChangeWorkspaceFolders(() => this.watch()));
    this.watch();
    this._register({ dispose: () => this.watcher?.dispose() });
  }

  /** The registry file, or undefined when no folder is open (the registry belongs to a workspace). */
  get file(): string | undefined {
    if (this.override) return this.override;
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return root ? path.join(root, 'tinker-models.json') : undefined;
  }

  /** The file, or an error that says what to do. */
  requireFile(): string {
    const f = this.file;
    if (!f) throw new Error('The model registry lives in a workspace: open a folder first (its tinker-models.json is the registry).');
    return f;
  }

  /** The registry (empty when the file does not exist yet). */
  async read(): Promise<Registry> {
    const { readRegistry } = await import('../../core/models/store');
    return readRegistry(this.requireFile());
  }

  /** Tells the views at once after this window wrote (the watcher may take a moment). */
  fire(): void {
    this.changed.fire();
  }

  private watch(): void {
    const f = this.file;
    if (f === this.watching) return;
    this.watcher?.dispose();
    this.watcher = undefined;
    this.watching = f;
    if (!f) return;
    const w = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(path.dirname(f)), path.basename(f)));
    const fire = () => this.changed.fire();
    const subs = [w.onDidChange(fire), w.onDidCreate(fire), w.onDidDelete(fire)];
    this.watcher = { dispose: () => [...subs, w].forEach((d) => d.dispose()) };
  }
}
