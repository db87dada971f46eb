// Inline validation of reward files: while typing (500 ms after the last change, a newer edit
// cancelling the run in flight: fileValidator.ts) and on save, the editor's text is validated by the core
// (src/core/reward/validate.ts) against the companion examples file and examples from the latest
// run that used the file; the problems become diagnostics on the reward file and on the examples
// file. In an untrusted workspace nothing is executed (only the static scan runs) and a diagnostic
// says why; granting trust re-validates.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RewardDiagnostic } from '../../core/reward/diagnostics';
import { lineRange } from '../../core/reward/diagnostics';
import type { RewardExample } from '../../core/reward/examples';
import { examplesFileFor, isExamplesFile, rewardFilesFor } from '../../core/reward/files';
import { scanForSideEffects } from '../../core/reward/staticScan';
import { rewardLanguage } from '../../core/reward/summary';
import type { RewardValidation } from '../../core/reward/validate';
import { Log } from '../common/log';
import { resolvePython } from '../common/pythonInterpreter';
import { RewardFileIndex } from '../common/rewardFiles';
import { onDidChangeSettings, rewardEnvironmentSetting, rewardRangeSetting } from '../common/settings';
import { errorMessage } from '../../core/errors';
import { DEBOUNCE_MS, FileValidator, type TrustSource, workspaceTrust } from './fileValidator';

/** examples taken from the latest run that used the reward file */
const RUN_EXAMPLES = 8;
export const UNTRUSTED_MESSAGE =
  'Reward code is not run in an untrusted workspace (Workspace Trust): only the static checks apply. Trust this workspace to test the function on its examples.';

export { DEBOUNCE_MS, type TrustSource };

export interface RewardFileState {
  /** the document version validated (undefined when validated from disk) */
  version?: number;
  untrusted: boolean;
  validation?: RewardValidation;
  /** examples used, in order (file examples, then run examples) */
  examples: RewardExample[];
  examplesFile: string;
  /** the run the extra examples came from */
  runDir?: string;
}

/** what validation needs to know about reward files (the RewardFileIndex) */
export type RewardFileLookup = Pick<RewardFileIndex, 'info' | 'isRewardFile' | 'ready' | 'onDidChange'>;

export interface RewardValidatorOptions {
  log: Log;
  index: RewardFileLookup;
  runsFolder: () => string;
  trust?: TrustSource;
  /** the collection's name (a second validator in tests needs its own) */
  name?: string;
}

export class RewardValidator extends FileValidator {
  readonly collection: vscode.DiagnosticCollection;
  private readonly states = new Map<string, RewardFileState>();
  private readonly emitter = this._register(new vscode.EventEmitter<vscode.Uri>());
  /** fires after a reward file's diagnostics were replaced */
  readonly onDidValidate = this.emitter.event;

  constructor(private readonly o: RewardValidatorOptions) {
    super(o.log, o.trust ?? workspaceTrust, 'reward');
    this.collection = this._register(vscode.languages.createDiagnosticCollection(o.name ?? 'tinker-reward'));
    this._registerAll(
      o.index.onDidChange(() => this.revalidateOpen()),
      onDidChangeSettings((e) => {
        if (e.affects('rewardRange', 'pythonPath')) this.revalidateOpen();
      }),
    );
    void o.index.ready().then(() => this.revalidateOpen());
  }

  state(uri: vscode.Uri): RewardFileState | undefined {
    return this.states.get(uri.toString());
  }

  /** a reward file itself, or an examples file's reward files */
  protected targetsOf(uri: vscode.Uri): vscode.Uri[] {
    const targets = isExamplesFile(uri.fsPath) ? this.rewardFilesOf(uri.fsPath) : [uri];
    return targets.filter((t) => this.o.index.isRewardFile(t));
  }

  private rewardFilesOf(examplesFile: string): vscode.Uri[] {
    return rewardFilesFor(examplesFile).map((f) => vscode.Uri.file(f));
  }

  /** Validates a reward file now and replaces its diagnostics (and its examples file's). */
  protected async run(uri: vscode.Uri, signal: AbortSignal): Promise<void> {
    const key = uri.toString();
    const info = this.o.index.info(uri);
    const current = await this.textOf(uri.fsPath);
    if (!info || !current) return;
    const file = uri.fsPath;
    const language = rewardLanguage(file);
    const examplesFile = examplesFileFor(file);
    const examplesUri = vscode.Uri.file(examplesFile);
    const examplesText = (await this.textOf(examplesFile))?.text;
    // zod and the runners load on first use, not at activation
    const [{ parseExamples }, { validateReward }] = await Promise.all([import('../../core/reward/examples'), import('../../core/reward/validate')]);
    const parsed = examplesText === undefined ? { examples: [], diagnostics: [] } : parseExamples(examplesText, path.basename(examplesFile));

    if (!this.trust.isTrusted) {
      const untrusted: RewardDiagnostic = { ...lineRange(current.text, 1), severity: 'information', code: 'untrusted', message: UNTRUSTED_MESSAGE };
      this.publish(uri, [untrusted, ...scanForSideEffects(current.text, language)]);
      this.collection.set(examplesUri, parsed.diagnostics.map((d) => toVsDiagnostic(d)));
      this.states.set(key, { ...(current.version !== undefined ? { version: current.version } : {}), untrusted: true, examples: parsed.examples, examplesFile });
      this.tellUntrusted(UNTRUSTED_MESSAGE);
      this.emitter.fire(uri);
      return;
    }

    const fromRun = await this.runExamples(file);
    const examples = [...parsed.examples, ...(fromRun?.examples ?? [])];
    const python = language === 'python' ? (await resolvePython(uri, this.o.log)).path : undefined;
    signal.throwIfAborted();
    const validation = await validateReward({
      file,
      source: current.text,
      examples,
      ...(examplesText !== undefined ? { examplesText } : {}),
      range: rewardRangeSetting(),
      timeoutMs: info.spec?.reward?.timeout_ms ?? 10_000,
      ...(python ? { python } : {}),
      environment: rewardEnvironmentSetting(),
      signal,
    });
    if (signal.aborted) return;
    this.publish(uri, validation.diagnostics);
    this.collection.set(examplesUri, [...parsed.diagnostics, ...validation.exampleDiagnostics].map((d) => toVsDiagnostic(d)));
    this.states.set(key, {
      ...(current.version !== undefined ? { version: current.version } : {}),
      untrusted: false,
      validation,
      examples,
      examplesFile,
      ...(fromRun ? { runDir: fromRun.runDir } : {}),
    });
    this.emitter.fire(uri);
  }

  private async runExamples(file: string): Promise<{ runDir: string; examples: RewardExample[] } | undefined> {
    try {
      const { examplesFromRun, readRunSamples, runsUsingReward } = await import('../../core/reward/runSamples');
      for (const runDir of await runsUsingReward(this.o.runsFolder(), file)) {
        try {
          return { runDir, examples: examplesFromRun(await readRunSamples(runDir), RUN_EXAMPLES) };
        } catch {
          // a run without samples yet: try an older one
        }
      }
    } catch (err) {
      this.o.log.info(`no run examples for ${path.basename(file)}: ${errorMessage(err)}`);
    }
    return undefined;
  }

  private publish(uri: vscode.Uri, diagnostics: readonly RewardDiagnostic[]): void {
    this.collection.set(uri, diagnostics.map((d) => toVsDiagnostic(d)));
  }
}

const SEVERITY: Record<RewardDiagnostic['severity'], vscode.DiagnosticSeverity> = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  information: vscode.DiagnosticSeverity.Information,
};

/** core positions are 1-based with an exclusive end column; VS Code's are 0-based */
export function toVsDiagnostic(d: RewardDiagnostic, source = 'Tinker reward'): vscode.Diagnostic {
  const range = new vscode.Range(d.line - 1, d.column - 1, d.endLine - 1, d.endColumn - 1);
  const diagnostic = new vscode.Diagnostic(range, d.message, SEVERITY[d.severity]);
  diagnostic.source = source;
  diagnostic.code = d.code;
  return diagnostic;
}
