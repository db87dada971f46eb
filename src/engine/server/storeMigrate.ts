// Moving an older engine store into the one shared store: before the one store, the extension kept its
// engine's checkpoints in its global storage. Each run and checkpoint there that the shared store lacks
// is copied in (weights first, then the index, under the store's lock), and only then is the old folder
// emptied, leaving a note that says where its checkpoints went. tinker:// paths do not change.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { EngineStore } from './store';

export interface MigrationResult {
  runs: number;
  checkpoints: number;
}

export async function migrateEngineStore(oldDir: string, storeDir: string, log: (line: string) => void = () => undefined): Promise<MigrationResult> {
  const result: MigrationResult = { runs: 0, checkpoints: 0 };
  if (path.resolve(oldDir) === path.resolve(storeDir)) return result;
  try {
    await fs.access(path.join(oldDir, 'engine-store.json'));
  } catch {
    return result;
  }
  const old = await EngineStore.open(oldDir, log);
  const store = await EngineStore.open(storeDir, log);
  await store.refresh();
  for (const run of old.allRuns()) {
    const have = store.run(run.training_run_id);
    const missing = run.checkpoints.filter((c) => !have?.checkpoints.some((x) => x.checkpoint_id === c.checkpoint_id));
    if (have && missing.length === 0) continue;
    for (const c of missing) {
      const to = path.join(storeDir, c.file);
      await fs.mkdir(path.dirname(to), { recursive: true });
      await fs.copyFile(path.join(oldDir, c.file), to);
    }
    if (have) for (const c of missing) have.checkpoints.push({ ...c });
    else result.runs++;
    result.checkpoints += missing.length;
    if (!have) await store.putRun({ ...run, checkpoints: run.checkpoints.map((c) => ({ ...c })) });
    else await store.save();
  }
  await fs.rm(path.join(oldDir, 'checkpoints'), { recursive: true, force: true });
  await fs.rename(path.join(oldDir, 'engine-store.json'), path.join(oldDir, 'engine-store.json.migrated'));
  await fs.writeFile(
    path.join(oldDir, 'MOVED.txt'),
    `The checkpoints of this engine store were moved to the one checkpoint store ${storeDir} on ${new Date().toISOString()}.\n`,
  );
  if (result.checkpoints > 0) log(`moved ${result.checkpoints} checkpoint(s) of ${result.runs} new training run(s) from ${oldDir} to the shared store ${storeDir}`);
  return result;
}
