// Which files are reward functions: those the workspace's run specs (*.grpo.json) name in
// `reward.file`, and those matching the `tinker.rewardFiles` globs. Specs are re-read when one is
// created, changed or deleted; the spec tells validation the time limit and where runs went. The
// same scan keeps the environment files the specs name in `env.file` (their model, dataset and
// limits, for the env editor: src/vscode/envs).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { globProblem, matchesGlob } from '../../core/reward/globMatch';
import { hasRewardExtension } from '../../core/reward/files';
import { Log } from './log';
import { onDidChangeSettings, rewardFilesSetting, SECTION } from './settings';
import { Disposable } from './lifecycle';
import type { ResolvedGrpoSpec } from '../../core/grpo/spec';
import { isSpecFileOf, specGlob } from '../../core/spec/kinds';
import { errorMessage } from '../../core/errors';

export interface RewardFileInfo {
  /** the spec that names this reward file, when one does */
  specFile?: string;
  spec?: ResolvedGrpoSpec;
}

const SPEC_GLOB = specGlob('grpo');

export class RewardFileIndex extends Disposable {
  private readonly bySpec = new Map<string, { rewardFile: string; spec: ResolvedGrpoSpec }>();
  private readonly envBySpec = new Map<string, { envFile: string; spec: ResolvedGrpoSpec }>();
  private readonly emitter = this._register(new vscode.EventEmitter<void>());
  /** fires when the set of reward files (or a spec's settings for one) may have changed */
  readonly onDidChange = this.emitter.event;
  private scanning: Promise<void> | undefined;
  /** invalid tinker.rewardFiles patterns already reported (once each) */
  private readonly reportedGlobs = new Set<string>();

  constructor(private readonly log: Log) {
    super();
    const watcher = vscode.workspace.createFileSystemWatcher(SPEC_GLOB);
    const reread = (uri: vscode.Uri) => void this.readSpec(uri.fsPath).then(() => this.emitter.fire());
    this._registerAll(
      watcher,
      watcher.onDidCreate(reread),
      watcher.onDidChange(reread),
      watcher.onDidDelete((uri) => {
        this.bySpec.delete(uri.fsPath);
        this.envBySpec.delete(uri.fsPath);
        this.emitter.fire();
      }),
      vscode.workspace.onDidSaveTextDocument((d) => {
        if (d.uri.scheme === 'file' && isSpecFileOf(d.fileName, 'grpo')) reread(d.uri);
      }),
      onDidChangeSettings((e) => {
        if (e.affects('rewardFiles')) this.emitter.fire();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.rescan()),
    );
  }

  /** Reads every spec of the workspace (once; later changes come from the watcher). */
  ready(): Promise<void> {
    this.scanning ??= this.rescan();
    return this.scanning;
  }

  /** the reward files the workspace's run specs name */
  async specRewardFiles(): Promise<string[]> {
    await this.ready();
    return [...new Set([...this.bySpec.values()].map((v) => v.rewardFile))].sort();
  }

  async rescan(): Promise<void> {
    const uris = await vscode.workspace.findFiles(SPEC_GLOB, '**/node_modules/**');
    this.bySpec.clear();
    this.envBySpec.clear();
    await Promise.all(uris.map((u) => this.readSpec(u.fsPath)));
    this.emitter.fire();
  }

  private async readSpec(specFile: string): Promise<void> {
    try {
      const text = await fs.readFile(specFile, 'utf8');
      const { parseGrpoSpecText, resolveGrpoSpec } = await import('../../core/grpo/spec'); // zod: after activation
      const spec = resolveGrpoSpec(parseGrpoSpecText(text, path.basename(specFile)), specFile);
      // a distillation spec may have no reward
      if (spec.reward) this.bySpec.set(specFile, { rewardFile: spec.reward.file, spec });
      else this.bySpec.delete(specFile);
      if (spec.env) this.envBySpec.set(specFile, { envFile: spec.env.file, spec });
      else this.envBySpec.delete(specFile);
    } catch (err) {
      // an unreadable or invalid spec names no reward file (the JSON schema reports its problems)
      this.bySpec.delete(specFile);
      this.envBySpec.delete(specFile);
      this.log.info(`reward files: ${path.basename(specFile)} skipped (${errorMessage(err).split('\n')[0]})`);
    }
  }

  /** The reward file's spec, if a spec names it; undefined when the file is not a reward file. */
  info(uri: vscode.Uri): RewardFileInfo | undefined {
    if (uri.scheme !== 'file' || !hasRewardExtension(uri.fsPath)) return undefined;
    const named = [...this.bySpec.entries()].filter(([, v]) => v.rewardFile === uri.fsPath).sort(([a], [b]) => a.localeCompare(b));
    const first = named[0];
    if (first) return { specFile: first[0], spec: first[1].spec };
    return this.matchesSetting(uri) ? {} : undefined;
  }

  /** The specs naming `file` in their `env.file`, by spec file name. */
  envSpecs(file: string): Array<{ specFile: string; spec: ResolvedGrpoSpec }> {
    return [...this.envBySpec.entries()]
      .filter(([, v]) => v.envFile === file)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([specFile, v]) => ({ specFile, spec: v.spec }));
  }

  /** the environment files the workspace's run specs name */
  async specEnvFiles(): Promise<string[]> {
    await this.ready();
    return [...new Set([...this.envBySpec.values()].map((v) => v.envFile))].sort();
  }

  isRewardFile(uri: vscode.Uri): boolean {
    return this.info(uri) !== undefined;
  }

  /** the `tinker.rewardFiles` globs, relative to each workspace folder (or absolute) */
  private matchesSetting(uri: vscode.Uri): boolean {
    const globs = rewardFilesSetting();
    if (globs.length === 0) return false;
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    const relative = folder ? path.relative(folder.uri.fsPath, uri.fsPath).split(path.sep).join('/') : undefined;
    const absolute = uri.fsPath.split(path.sep).join('/');
    return globs.some((glob) => {
      const problem = globProblem(glob);
      if (problem !== undefined) {
        if (!this.reportedGlobs.has(glob)) {
          this.reportedGlobs.add(glob);
          this.log.warn(`${SECTION}.rewardFiles: ${problem}`);
          void vscode.window.showWarningMessage(`Setting ${SECTION}.rewardFiles: ${problem}.`);
        }
        return false;
      }
      return path.isAbsolute(glob) ? matchesGlob(absolute, glob) : relative !== undefined && matchesGlob(relative, glob);
    });
  }
}
