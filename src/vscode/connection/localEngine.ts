// The embedded engine as the extension runs it: started on demand (when the backend is "local" and
// something needs a server), in its own Node process so the editor never waits on training maths,
// with its checkpoints in the user's one engine store (engineStoreDir(): the CLI's and the MCP
// server's too); stopped on deactivate. The store the extension used before (in its global storage)
// is moved into it on the first start.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { EngineProcess, startEngineProcess } from '../../engine/launcher';
import { migrateEngineStore } from '../../engine/server/storeMigrate';
import { engineStoreDir } from '../../engine/storeDir';
import { errorMessage } from '../../core/errors';
import { Log } from '../common/log';
import { Disposable, toDisposable } from '../common/lifecycle';

export class LocalEngine extends Disposable {
  private running: EngineProcess | undefined;
  private starting: Promise<EngineProcess> | undefined;
  private readonly exits = this._register(new vscode.EventEmitter<string>());
  /** The engine process ended without being asked to (crash, kill, out of memory): a message saying so. */
  readonly onDidExitUnexpectedly = this.exits.event;

  constructor(
    private readonly extensionPath: string,
    private readonly storage: vscode.Uri,
    private readonly log: Log,
  ) {
    super();
    this._register(toDisposable(() => void this.stop()));
  }

  /** The engine's URL when it is running. */
  get url(): string | undefined {
    return this.running?.url;
  }

  /** Starts the engine if needed (with a cancellable progress notification): its URL and token. */
  async ensureStarted(): Promise<{ url: string; apiKey: string }> {
    if (this.running) return { url: this.running.url, apiKey: this.running.apiKey };
    this.starting ??= this.start().finally(() => {
      this.starting = undefined;
    });
    const p = await this.starting;
    return { url: p.url, apiKey: p.apiKey };
  }

  /** The folder of the engine's checkpoint store. */
  get storeDir(): string {
    return engineStoreDir();
  }

  private async start(): Promise<EngineProcess> {
    const legacy = path.join(this.storage.fsPath, 'engine');
    await migrateEngineStore(legacy, this.storeDir, (l) => this.log.info(`[engine store] ${l}`)).catch((err: unknown) =>
      this.log.warn(`could not move the checkpoints in ${legacy} to the shared store ${this.storeDir}: ${errorMessage(err)} (they stay where they are)`),
    );
    const proc = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Starting the local Tinker engine…', cancellable: true },
      (_progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        return startEngineProcess({
          entry: path.join(this.extensionPath, 'dist', 'engine.js'),
          dataDir: this.storeDir,
          signal: abort.signal,
          onLog: (line) => this.log.info(`[engine] ${line}`),
        });
      },
    );
    this.running = proc;
    this.log.info(`local engine listening on ${proc.url} (pid ${proc.pid})`);
    void proc.exited.then((code) => {
      if (this.running === proc) {
        this.running = undefined;
        const how = code === null ? 'was killed' : `exited with code ${code}`;
        this.log.warn(`local engine ${how}`);
        this.exits.fire(`the local engine stopped unexpectedly (its process ${proc.pid} ${how})`);
      }
    });
    return proc;
  }

  async stop(): Promise<void> {
    const proc = this.running;
    this.running = undefined;
    await proc?.stop();
  }
}
