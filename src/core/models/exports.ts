// Records an export or a publish on the registry's model version of that checkpoint, when there is one.
import * as path from 'node:path';
import * as fs from 'node:fs';
import { publishToHub, type PublishRequest, type PublishResult } from '../export/publish';
import { type ExportRecord, findVersion, registryRelative, versionOfPath } from './registry';
import { updateRegistry } from './store';

export interface ExportToRecord {
  /** absent: a temporary folder, not kept */
  folder?: string;
  sha256: string;
  hubUrl?: string;
  private?: boolean;
  commit?: string;
}

/**
 * Adds the export to the version named by id (`name@vN`) or by its tinker:// path. Returns the
 * version's id, or undefined (and writes nothing) when the registry has no such version.
 */
export async function recordExport(registryFile: string, versionOrPath: string, e: ExportToRecord, now: Date = new Date()): Promise<string | undefined> {
  return updateRegistry(registryFile, (reg) => {
    const v = versionOrPath.startsWith('tinker://') ? versionOfPath(reg, versionOrPath) : findVersion(reg, versionOrPath);
    if (!v) return undefined;
    const record: ExportRecord = {
      at: now.toISOString(),
      ...(e.folder ? { path: registryRelative(path.dirname(registryFile), e.folder) } : {}),
      sha256: e.sha256,
      ...(e.hubUrl ? { hub_url: e.hubUrl } : {}),
      ...(e.private !== undefined ? { private: e.private } : {}),
      ...(e.commit ? { commit: e.commit } : {}),
    };
    v.exports = [...(v.exports ?? []), record];
    return v.id;
  });
}

/**
 * Publishes the folder, then records it on the registry's version of its checkpoint (by
 * `version`, else by the tinker path given or named in the folder's card) when the registry has it.
 */
export async function publishAndRecord(req: PublishRequest & { registryFile?: string; version?: string; temporaryFolder?: boolean }): Promise<{ published: PublishResult; version?: string }> {
  const published = await publishToHub(req);
  const key = req.version ?? published.tinkerPath;
  if (!req.registryFile || !key || !fs.existsSync(req.registryFile)) return { published };
  const version = await recordExport(req.registryFile, key, { ...(req.temporaryFolder ? {} : { folder: path.resolve(req.folder) }), sha256: published.sha256, hubUrl: published.url, private: published.private, ...(published.commit ? { commit: published.commit } : {}) });
  return { published, ...(version ? { version } : {}) };
}
