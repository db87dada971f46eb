// A real second process that holds a run directory's lock until killed: a writer in another window,
// or one that dies without releasing it. Shared by the unit and extension-host tests.
import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';

const runLockModule = path.resolve(__dirname, '../../../src/core/runs/runLock.js');

/** Starts a process that locks `dir`; resolves once it holds the lock. */
export async function holdInChild(dir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', `require(${JSON.stringify(runLockModule)}).lockRunDirectory(${JSON.stringify(dir)}); console.log('locked'); setInterval(() => {}, 1 << 30);`], {
    stdio: ['ignore', 'pipe', 'inherit'],
    // inside the extension host process.execPath is Electron; run it as plain node
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
    child.on('exit', (code) => reject(new Error(`lock holder exited with ${code}`)));
  });
  return child;
}

/** Kills the holder the hard way (no chance to release the lock) and waits until it is gone. */
export async function killHolder(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}
