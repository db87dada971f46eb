// Inline validation of environment files (`*.env.py`, `.env.js`, `.mjs`, `.cjs`, `.ts`), as reward
// files get it (the same debounce, cancellation and trust rules: rewards/fileValidator.ts): the
// editor's text is validated by the core (src/core/env/validate.ts) on the first lines of the
// dataset of a run spec that names the file (its class, time limit and max_turns too), else of a
// JSONL file beside it (train*.jsonl first); the problems
// become diagnostics on the env file. In an untrusted workspace nothing is executed (only the static
// scan runs) and a diagnostic says why; granting trust re-validates.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { isEnvFile, looksLikeEnv } from '../../core/env/files';
import type { EnvValidation } from '../../core/env/validate';
import { lineRange, type RewardDiagnostic } from '../../core/reward/diagnostics';
import { scanForSideEffects } from '../../core/reward/staticScan';
import { rewardLanguage } from '../../core/reward/summary';
import type { Log } from '../common/log';
import { onDidChangeSettings, rewardEnvironmentSetting } from '../common/settings';
import { FileValidator, type TrustSource, workspaceTrust } from '../rewards/fileValidator';
import { resolvePython } from '../common/pythonInterpreter';
import type { RewardFileIndex } from '../common/rewardFiles';
import { toVsDiagnostic } from '../rewards/rewardValidation';

/** dataset lines each validation plays an episode on */
export const VALIDATION_LINES = 2;
export const ENV_UNTRUSTED_MESSAGE =
  'Environment code is not run in an untrusted workspace (Workspace Trust): only the static checks apply. Trust this workspace to play episodes of the environment.';

export interface EnvFileState {
  version?: number;
  untrusted: boolean;
  validation?: EnvValidation;
  /** the spec whose dataset, class and limits were used */
  specFile?: string;
}

export interface EnvValidatorOptions {
  log: Log;
  index: Pick<RewardFileIndex, 'envSpecs' | 'ready' | 'onDidChange'>;
  trust?: TrustSource;
  name?: string;
}

export class EnvValidator extends FileValidator {
  readonly collection: vscode.DiagnosticCollection;
  private readonly states = new Map<string, EnvFileState>();
  private readonly emitter = this._register(new vscode.EventEmitter<vscode.Uri>());
  /** fires after an env file's diagnostics were replaced */
  readonly onDidValidate = this.emitter.event;

  constructor(private readonly o: EnvValidatorOptions) {
    super(o.log, o.trust ?? workspaceTrust, 'environment');
    this.collection = this._register(vscode.languages.createDiagnosticCollection(o.name ?? 'tinker-env'));
    this._registerAll(
      o.index.onDidChange(() => this.revalidateOpen()),
      onDidChangeSettings((e) => {
        if (e.affects('pythonPath')) this.revalidateOpen();
      }),
    );
    void o.index.ready().then(() => this.revalidateOpen());
  }

  state(uri: vscode.Uri): EnvFileState | undefined {
    return this.states.get(uri.toString());
  }

  protected targetsOf(uri: vscode.Uri): vscode.Uri[] {
    return isEnvFile(uri.fsPath) ? [uri] : [];
  }

  protected async run(uri: vscode.Uri, signal: AbortSignal): Promise<void> {
    const key = uri.toString();
    const current = await this.textOf(uri.fsPath);
    if (!current) return;
    const file = uri.fsPath;
    const language = rewardLanguage(file);
    const version = current.version !== undefined ? { version: current.version } : {};
    await this.o.index.ready();
    const named = this.o.index.envSpecs(file)[0];
    if (!named && !looksLikeEnv(current.text)) {
      // another tool's *.env.ts: not ours to run
      this.collection.delete(uri);
      this.states.delete(key);
      this.emitter.fire(uri);
      return;
    }
    if (!this.trust.isTrusted) {
      const untrusted: RewardDiagnostic = { ...lineRange(current.text, 1), severity: 'information', code: 'untrusted', message: ENV_UNTRUSTED_MESSAGE };
      this.publish(uri, [untrusted, ...scanForSideEffects(current.text, language, 'environments')]);
      this.states.set(key, { ...version, untrusted: true });
      this.tellUntrusted(ENV_UNTRUSTED_MESSAGE);
      this.emitter.fire(uri);
      return;
    }
    const env = named?.spec.env;
    const { validateEnv } = await import('../../core/env/validate'); // zod and the runners: on first use
    const { datasetBeside, firstDatasetLines, specDatasetFile } = await import('../../core/env/play');
    const dataset = named ? specDatasetFile(named.spec, named.specFile) : await datasetBeside(file);
    const text = dataset ? await fs.readFile(dataset, 'utf8').catch(() => undefined) : undefined;
    const problems = dataset && text !== undefined ? firstDatasetLines(text, path.basename(dataset), VALIDATION_LINES) : [];
    const python = language === 'python' ? (await resolvePython(uri, this.o.log)).path : undefined;
    signal.throwIfAborted();
    const validation = await validateEnv({
      file,
      source: current.text,
      problems,
      ...(env?.class ? { className: env.class } : {}),
      ...(env ? { timeoutMs: env.timeout_ms, maxTurns: env.max_turns } : {}),
      ...(python ? { python } : {}),
      environment: rewardEnvironmentSetting(),
      signal,
    });
    if (signal.aborted) return;
    this.publish(uri, validation.diagnostics);
    this.states.set(key, { ...version, untrusted: false, validation, ...(named ? { specFile: named.specFile } : {}) });
    this.emitter.fire(uri);
  }

  private publish(uri: vscode.Uri, diagnostics: readonly RewardDiagnostic[]): void {
    this.collection.set(uri, diagnostics.map((d) => toVsDiagnostic(d, 'Tinker environment')));
  }
}
