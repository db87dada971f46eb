// Whether this process is going away mid-run (VS Code deactivates the extension when its window
// reloads or closes). Kept apart from runLock (which loads zod) so the extension can say so cheaply.

let goingAway = false;

/**
 * From now on a released run lock stays on disk, so once this process is gone its runs read as
 * interrupted, like those of a writer that was killed, instead of as stopped on purpose.
 */
export function leaveLocksAtShutdown(): void {
  goingAway = true;
}

export function processGoingAway(): boolean {
  return goingAway;
}
