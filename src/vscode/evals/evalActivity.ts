// The evaluations running in this window, by results folder, with their progress: the Runs view's
// eval-results rows follow them (an eval that has not written its summary yet is listed too).
import * as vscode from 'vscode';

export interface EvalActivity {
  done: number;
  total: number;
}

const running = new Map<string, EvalActivity>();
const changed = new vscode.EventEmitter<void>();

/** Fires when an eval starts, makes progress or ends. */
export const onDidChangeEvalActivity = changed.event;

export function evalActivity(dir: string): EvalActivity | undefined {
  return running.get(dir);
}

export function runningEvalDirs(): string[] {
  return [...running.keys()];
}

export function reportEvalActivity(dir: string, activity: EvalActivity | undefined): void {
  if (activity) running.set(dir, activity);
  else running.delete(dir);
  changed.fire();
}
