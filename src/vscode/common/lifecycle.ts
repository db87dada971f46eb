// How the extension's long-lived objects release what they own: each registers its event
// emitters, subscriptions, status-bar items and clean-up functions once, where it creates them,
// and the one dispose() of the base releases them, newest first, so that what was built on top of
// something goes before it. Disposing twice is harmless.

/** Anything with a dispose(): VS Code's disposables, timers' clean-ups, panels. */
export interface Releasable {
  dispose(): unknown;
}

/** A disposable from a clean-up function (clearing a timer, aborting work in flight). */
export function toDisposable(release: () => unknown): Releasable {
  return { dispose: release };
}

export abstract class Disposable implements Releasable {
  private readonly owned: Releasable[] = [];
  private released = false;

  protected get isDisposed(): boolean {
    return this.released;
  }

  /** Owns `d` from now on; registered after dispose(), it is released at once. */
  protected _register<T extends Releasable>(d: T): T {
    if (this.released) d.dispose();
    else this.owned.push(d);
    return d;
  }

  /** Owns several at once (the subscriptions a constructor makes). */
  protected _registerAll(...ds: Releasable[]): void {
    for (const d of ds) this._register(d);
  }

  dispose(): void {
    if (this.released) return;
    this.released = true;
    while (this.owned.length) this.owned.pop()!.dispose();
  }
}
