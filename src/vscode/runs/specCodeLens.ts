// CodeLenses on the first line of a run spec (every kind of the spec kinds table): "Start run"; "Resume run" when a run
// directory started from this spec stopped before its final checkpoint; while a run of the spec is
// going, its progress and "Cancel run" instead.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ParsedFileCache } from '../../core/fs/parsedFileCache';
import { isResumable } from '../../core/runs/runStatus';
import { RunRegistry } from './runRegistry';
import { RunsModel } from './runsModel';
import { describeProgress } from './runStatusBar';
import { throttle } from '../common/throttle';
import { Disposable } from '../common/lifecycle';
import { COMMAND } from '../common/commandIds';
import { SPEC_KIND_IDS, specGlob, specKind, specKindOfFile } from '../../core/spec/kinds';

export const SPEC_SELECTOR: vscode.DocumentSelector = SPEC_KIND_IDS.map((kind) => ({ pattern: specGlob(kind) }));

/** the spec file of each run's config.json, re-read only when the file changed (a refresh reads none) */
let specFiles: ParsedFileCache<string | undefined> | undefined;

/** The newest run directory in the runs folder started from `specFile` that has no final checkpoint. */
export async function resumableRunFor(runs: RunsModel, registry: RunRegistry, specFile: string): Promise<string | undefined> {
  const want = path.resolve(specFile);
  const listed = await runs.list();
  const dirs = new Set(listed.map((r) => r.dir));
  specFiles?.prune((file) => dirs.has(path.dirname(file)));
  for (const run of listed) {
    if (!isResumable(run, registry.byDir(run.dir))) continue;
    if ((await specFileOf(run.dir)) === want) return run.dir;
  }
  return undefined;
}

async function specFileOf(runDir: string): Promise<string | undefined> {
  const { parseRunConfig, runConfigFile, specFileOfConfig } = await import('../../core/runs/runConfig'); // zod: loaded on first use
  specFiles ??= new ParsedFileCache((text, file) => {
    try {
      return specFileOfConfig(parseRunConfig(text, file));
    } catch {
      return undefined; // not one of ours, or still being written (its next write changes the file)
    }
  });
  return specFiles.get(runConfigFile(runDir));
}

export class SpecCodeLensProvider extends Disposable implements vscode.CodeLensProvider {
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(
    private readonly runs: RunsModel,
    private readonly registry: RunRegistry,
  ) {
    super();
    const fromRegistry = throttle(() => this.changed.fire(), 500);
    this._registerAll(runs.onDidChange(() => this.changed.fire()), registry.onDidChange(fromRegistry), fromRegistry);
  }

  async provideCodeLenses(doc: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    const range = new vscode.Range(0, 0, 0, 0);
    const specFile = doc.uri.fsPath;
    const running = this.registry.active().find((r) => r.specFile && path.resolve(r.specFile) === path.resolve(specFile));
    if (running) {
      return [
        new vscode.CodeLens(range, { title: `$(sync~spin) ${running.runName}: ${describeProgress(running)}`, command: running.runDir ? COMMAND.openMetrics : '', arguments: running.runDir ? [running.runDir] : [] }),
        new vscode.CodeLens(range, { title: 'Cancel run', command: COMMAND.cancelRun, arguments: [running.runDir ?? running.id] }),
      ];
    }
    const kindId = specKindOfFile(specFile);
    // the lenses are registered on the kinds' spec globs: any other file has none
    if (kindId === undefined) return [];
    const kind = specKind(kindId);
    const lenses = [
      new vscode.CodeLens(range, {
        title: '$(play) Start run',
        tooltip: `Start ${kind.aRun} from this spec`,
        command: kind.startCommand,
        arguments: [doc.uri],
      }),
    ];
    if (doc.uri.scheme === 'file') {
      const resumable = await resumableRunFor(this.runs, this.registry, specFile);
      if (resumable) {
        lenses.push(
          new vscode.CodeLens(range, {
            title: `$(debug-continue) Resume run ${path.basename(resumable)}`,
            tooltip: `Continue ${resumable} from its last state checkpoint`,
            command: COMMAND.resumeRun,
            arguments: [resumable, doc.uri],
          }),
        );
      }
    }
    return lenses;
  }
}
