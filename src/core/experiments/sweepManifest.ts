// sweep.json: the manifest a sweep writes in its folder (`<runs folder>/<sweep name>/sweep.json`), read by
// the Runs view, the comparison panel and `sweep_status`. Its runs are ordinary run directories beside it.
import * as fs from 'fs';
import * as path from 'path';
import * as z from 'zod';

export const SWEEP_MANIFEST_FILE = 'sweep.json';

export const SweepMetric = z.object({ name: z.string().min(1), goal: z.enum(['maximize', 'minimize']) });
export type SweepMetric = z.infer<typeof SweepMetric>;

/** A point: dot path of a base-spec field → its value in this run. */
export const SweepPoint = z.record(z.string(), z.unknown());
export type SweepPoint = z.infer<typeof SweepPoint>;

export const SweepManifestRun = z.object({
  /** its folder name under the sweep folder */
  name: z.string().min(1),
  point: SweepPoint,
  seed: z.number().optional(),
});
export type SweepManifestRun = z.infer<typeof SweepManifestRun>;

export const SweepManifest = z.object({
  kind: z.literal('sweep'),
  name: z.string().min(1),
  /** the sweep file's absolute path */
  file: z.string(),
  metric: SweepMetric,
  /** dot paths of the parameters that take more than one value */
  swept: z.array(z.string()),
  runs: z.array(SweepManifestRun),
});
export type SweepManifest = z.infer<typeof SweepManifest>;

/** What a run's config.json records of its sweep. */
export const RunSweepRecord = z.object({ name: z.string(), point: SweepPoint, seed: z.number().optional() });
export type RunSweepRecord = z.infer<typeof RunSweepRecord>;

export function isSweepDir(dir: string): boolean {
  return fs.existsSync(path.join(dir, SWEEP_MANIFEST_FILE));
}

/** Reads and validates `<dir>/sweep.json`; the error names the file and the field. */
export function readSweepManifest(dir: string): SweepManifest {
  const file = path.join(dir, SWEEP_MANIFEST_FILE);
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = SweepManifest.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${file}: ${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

export function writeSweepManifest(dir: string, manifest: SweepManifest): void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, SWEEP_MANIFEST_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(SweepManifest.parse(manifest), null, 2) + '\n');
  fs.renameSync(tmp, file);
}
