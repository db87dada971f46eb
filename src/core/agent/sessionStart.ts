// How an agent session finds and reads the run it starts or resumes: the spec file with the call's
// overrides, the run directory `resume` names, and the spec a resumed run continues with (its
// config.json, through the kind's own spec module), plus what the spec file now says otherwise.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AnyRunKind } from '../training/runKind';
import type { RunWriter } from '../runs/runWriter';
import { runKindOfConfig } from '../spec/kinds';
import { mergeSpec } from '../spec/overrides';
import { specDifferences } from '../spec/resume';
import { parseJsonWithPosition } from '../spec/text';
import { SessionError, type SessionSpec } from './sessionTypes';

/** The spec file (relative to the workspace) with `overrides` on top, validated by the kind's spec module. */
export async function specOfFile(kind: AnyRunKind, baseDir: string, file: string, overrides: Record<string, unknown> | undefined): Promise<{ specFile: string; spec: SessionSpec }> {
  const specFile = path.resolve(baseDir, file);
  let text: string;
  try {
    text = fs.readFileSync(specFile, 'utf8');
  } catch (err) {
    throw new SessionError(`spec_file: cannot read ${specFile} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const raw = parseJsonWithPosition(text, path.basename(specFile));
  const { spec } = await (await kind.spec()).parseValue(mergeSpec(raw, overrides ?? {}), specFile);
  return { specFile, spec: spec as SessionSpec };
}

/** The run directory `resume` names: a path (relative to the workspace or the runs folder), or "latest" for the newest run of the spec's name and kind. */
export function resumeDir(o: { baseDir: string; runsDir: string }, resume: string, name: string, kind: string): string {
  if (resume !== 'latest') {
    const dir = [path.resolve(o.baseDir, resume), path.resolve(o.runsDir, resume)].find((d) => fs.existsSync(path.join(d, 'config.json')));
    if (!dir) throw new SessionError(`resume: no run directory (with a config.json) at ${resume}`);
    return dir;
  }
  const prefix = `${name}-`;
  const dirs = fs.existsSync(o.runsDir) ? fs.readdirSync(o.runsDir).filter((d) => d.startsWith(prefix) && /^\d{8}-\d{6}/.test(d.slice(prefix.length))) : [];
  const ofKind = dirs
    .map((d) => path.join(o.runsDir, d))
    .filter((d) => {
      try {
        return runKindOfConfig(JSON.parse(fs.readFileSync(path.join(d, 'config.json'), 'utf8'))) === kind;
      } catch {
        return false;
      }
    })
    .sort();
  const latest = ofKind[ofKind.length - 1];
  if (!latest) throw new SessionError(`resume "latest": no run of "${name}" in ${o.runsDir}`);
  return latest;
}

/** The spec a resumed run continues with: the one its config.json records, `overrides` on top, validated as `specFile` would be. */
export async function recordedSpec(kind: AnyRunKind, writer: RunWriter, specFile: string, overrides: Record<string, unknown>): Promise<SessionSpec> {
  const m = await kind.spec();
  const recorded = m.fromConfig(writer.readConfig(), path.join(writer.dir, 'config.json'));
  return (await m.parseValue(mergeSpec(recorded, overrides), specFile)).spec as SessionSpec;
}

/** Where the spec file differs from what a resumed run continues with (fields not given as overrides), said to the agent; empty when nothing differs. */
export async function unappliedNote(kind: AnyRunKind, spec: SessionSpec, fileSpec: SessionSpec, overrides: Record<string, unknown> | undefined): Promise<string> {
  const unapplied = specDifferences(spec as Record<string, unknown>, fileSpec as Record<string, unknown>).filter((d) => !(d.field in (overrides ?? {})));
  if (unapplied.length === 0) return '';
  const each = unapplied.map((d) => `${d.field} (run ${JSON.stringify(d.recorded) ?? '(not set)'}, file ${JSON.stringify(d.given) ?? '(not set)'})`).join(', ');
  return `\nThe run continues with its recorded configuration (config.json); the spec file now differs in ${each}, not applied: a resume may change only ${(await kind.spec()).resumable.join(', ')}, given as overrides.`;
}
