// The reward-function commands: New Reward Function (a commented template and its examples file),
// Dry Run Reward (a run's samples or fresh samples re-scored with the editor's text, the report as a
// Markdown document) and Show Reward Examples (the CodeLens's details as a document).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { DryRunReport } from '../../core/rollouts/dryRun';
import { examplesFileFor } from '../../core/reward/files';
import { EXAMPLES_TEMPLATE, rewardTemplate, TEMPLATE_EXTENSIONS, TemplateLanguage } from '../../core/reward/templates';
import { rewardLanguage } from '../../core/reward/summary';
import { TinkerConnection } from '../connection/connection';
import { readNetworkSettings } from '../common/networkSettings';
import { Log } from '../common/log';
import type { ResolvedGrpoSpec } from '../../core/grpo/spec';
import { resolvePython } from '../common/pythonInterpreter';
import { examplesMarkdown } from './rewardCodeLens';
import { RewardFileIndex } from '../common/rewardFiles';
import { RewardValidator, UNTRUSTED_MESSAGE } from './rewardValidation';
import { addToRewardFilesSetting, readBackendFor, rewardEnvironmentSetting, rewardRangeSetting } from '../common/settings';
import { Disposable } from '../common/lifecycle';
import { COMMAND } from '../common/commandIds';
import { registerTable } from '../common/commandTable';
import { errorMessage } from '../../core/errors';
import { specFileMatch } from '../../core/spec/kinds';

export const REPORT_SCHEME = 'tinker-reward-report';

export interface RewardCommandDeps {
  log: Log;
  index: RewardFileIndex;
  validator: RewardValidator;
  connection: TinkerConnection;
  runsFolder: () => string;
  cacheDir: string;
}

/** read-only Markdown documents for the reports (a virtual document per report title) */
class ReportDocuments extends Disposable implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly emitter = this._register(new vscode.EventEmitter<vscode.Uri>());
  readonly onDidChange = this.emitter.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  async show(title: string, markdown: string): Promise<vscode.TextDocument> {
    const uri = vscode.Uri.from({ scheme: REPORT_SCHEME, path: `/${title}.md` });
    this.texts.set(uri.toString(), markdown);
    this.emitter.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    // plain Markdown text beside the code: tables a screen reader reads cell by cell, and the
    // Markdown preview (Open Preview) renders it when the user wants charts-like bars
    await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
    return doc;
  }
}

export type DryRunChoice = { runDir: string } | { fresh: true };

// What tests and CodeLenses pass the commands; anything else counts as no argument (the prompts run).
const uriArg = (arg: unknown) => (arg instanceof vscode.Uri ? arg : undefined);
const field = (arg: unknown, key: string): unknown => (typeof arg === 'object' && arg !== null ? (arg as Record<string, unknown>)[key] : undefined);

function newRewardArgs(arg: unknown): { language?: TemplateLanguage; file?: string } {
  const language = field(arg, 'language');
  const file = field(arg, 'file');
  return {
    ...(language === 'python' || language === 'typescript' || language === 'javascript' ? { language } : {}),
    ...(typeof file === 'string' ? { file } : {}),
  };
}

function dryRunChoice(arg: unknown): DryRunChoice | undefined {
  const runDir = field(arg, 'runDir');
  if (typeof runDir === 'string') return { runDir };
  return field(arg, 'fresh') === true ? { fresh: true } : undefined;
}

export function registerRewardCommands(d: RewardCommandDeps): vscode.Disposable[] {
  const reports = new ReportDocuments();
  return [
    reports,
    vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, reports),
    ...registerTable(
      {
        [COMMAND.newRewardFunction]: (args?: unknown) => newRewardFunction(d, newRewardArgs(args)),
        [COMMAND.dryRunReward]: (uri?: unknown, choice?: unknown) => dryRunReward(d, reports, uriArg(uri), dryRunChoice(choice)),
        [COMMAND.showRewardExamples]: async (uri?: unknown) => {
          const target = uriArg(uri) ?? vscode.window.activeTextEditor?.document.uri;
          const state = target ? d.validator.state(target) : undefined;
          if (!target || !state) {
            void vscode.window.showInformationMessage(`Open a reward file (named by a ${specFileMatch('grpo')} spec or the tinker.rewardFiles setting) to see its examples.`);
            return undefined;
          }
          return reports.show(`Examples of ${path.basename(target.fsPath)}`, examplesMarkdown(state));
        },
      },
      d.log,
    ),
  ];
}

async function newRewardFunction(d: RewardCommandDeps, args?: { language?: TemplateLanguage; file?: string }): Promise<vscode.Uri | undefined> {
  let language = args?.language;
  if (!language) {
    const pick = await vscode.window.showQuickPick(
      [
        { label: 'Python', description: 'compute_reward(completion, ground_truth) -> float', language: 'python' as const },
        { label: 'TypeScript', description: 'computeReward(completion, groundTruth): number', language: 'typescript' as const },
        { label: 'JavaScript', description: 'computeReward(completion, groundTruth)', language: 'javascript' as const },
      ],
      { title: 'New Reward Function', placeHolder: 'Language of the reward function' },
    );
    if (!pick) return undefined;
    language = pick.language;
  }
  let file = args?.file;
  if (!file) {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const target = await vscode.window.showSaveDialog({
      title: 'New Reward Function',
      ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, `reward${TEMPLATE_EXTENSIONS[language]}`) } : {}),
      filters: { [language === 'python' ? 'Python' : language === 'typescript' ? 'TypeScript' : 'JavaScript']: [TEMPLATE_EXTENSIONS[language].slice(1)] },
    });
    if (!target) return undefined;
    file = target.fsPath;
  }
  const examplesFile = examplesFileFor(file);
  try {
    await fs.writeFile(file, rewardTemplate(language, path.basename(examplesFile)), { flag: 'wx' });
  } catch (err) {
    const exists = err instanceof Error && 'code' in err && err.code === 'EEXIST';
    void vscode.window.showErrorMessage(exists ? `${path.basename(file)} already exists; choose another name.` : `Cannot write ${file}: ${errorMessage(err)}`);
    return undefined;
  }
  await fs.writeFile(examplesFile, EXAMPLES_TEMPLATE, { flag: 'wx' }).catch(() => undefined); // keep an existing examples file
  const uri = vscode.Uri.file(file);
  if (!d.index.isRewardFile(uri)) await addToRewardFilesSetting(uri);
  await vscode.window.showTextDocument(uri);
  return uri;
}

async function dryRunReward(d: RewardCommandDeps, reports: ReportDocuments, uri?: vscode.Uri, choice?: DryRunChoice): Promise<DryRunReport | undefined> {
  const target = uri ?? vscode.window.activeTextEditor?.document.uri;
  await d.index.ready();
  const info = target ? d.index.info(target) : undefined;
  if (!target || !info) {
    void vscode.window.showErrorMessage(`Dry Run Reward works on a reward file: one a ${specFileMatch('grpo')} spec names in "reward.file", or one matching the tinker.rewardFiles setting.`);
    return undefined;
  }
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage(UNTRUSTED_MESSAGE);
    return undefined;
  }
  const file = target.fsPath;
  const picked = choice ?? (await pickSource(d, file, info.spec?.model));
  if (!picked) return undefined;
  const open = vscode.workspace.textDocuments.find((doc) => doc.uri.toString() === target.toString());
  const source = open?.getText();
  const python = rewardLanguage(file) === 'python' ? (await resolvePython(target, d.log)).path : undefined;
  const common = { file, ...(source !== undefined ? { source } : {}), ...(python ? { python } : {}), environment: rewardEnvironmentSetting(), range: rewardRangeSetting(), ...(info.spec?.reward ? { timeoutMs: info.spec.reward.timeout_ms } : {}) };
  try {
    const report = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Dry run of ${path.basename(file)}`, cancellable: true },
      async (_progress, token) => {
        const abort = new AbortController();
        const sub = token.onCancellationRequested(() => abort.abort(new Error('cancelled')));
        try {
          const { dryRunOnModel, dryRunOnRun } = await import('../../core/rollouts/dryRun');
          if ('runDir' in picked) return await dryRunOnRun({ ...common, runDir: picked.runDir, signal: abort.signal });
          if (!info.spec || !info.specFile) throw new Error('fresh samples need a run spec that names this reward file (for the model and the dataset)');
          return await freshDryRun(d, info.spec, info.specFile, common, abort.signal, dryRunOnModel);
        } finally {
          sub.dispose();
        }
      },
    );
    const { dryRunMarkdown } = await import('../../core/rollouts/dryRun');
    await reports.show(`Dry run of ${path.basename(file)}`, dryRunMarkdown(report, path.basename(file)));
    return report;
  } catch (err) {
    const message = errorMessage(err);
    d.log.warn(`dry run of ${path.basename(file)} failed: ${message}`);
    void vscode.window.showErrorMessage(`Dry run of ${path.basename(file)} failed: ${message}`);
    return undefined;
  }
}

async function pickSource(d: RewardCommandDeps, file: string, model: string | undefined): Promise<DryRunChoice | undefined> {
  const items: Array<vscode.QuickPickItem & { choice: DryRunChoice }> = [];
  const { readRunSamples, runsUsingReward } = await import('../../core/reward/runSamples');
  for (const runDir of await runsUsingReward(d.runsFolder(), file)) {
    try {
      const s = await readRunSamples(runDir);
      const n = s.groups.reduce((k, g) => k + g.samples.length, 0);
      items.push({ label: path.basename(runDir), description: `${n} samples of iteration ${s.iterations[0]}`, choice: { runDir } });
    } catch {
      // a run without samples yet
    }
  }
  if (model) items.push({ label: 'Fresh samples from the model', description: model, choice: { fresh: true } });
  if (items.length === 0) {
    void vscode.window.showInformationMessage(`No run has used ${path.basename(file)} yet, and no run spec names it: nothing to dry-run on.`);
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(items, { title: 'Dry Run Reward', placeHolder: 'Score which samples with the edited function?' });
  return pick?.choice;
}

type DryRunOnModel = (typeof import('../../core/rollouts/dryRun'))['dryRunOnModel'];

async function freshDryRun(
  d: RewardCommandDeps,
  spec: ResolvedGrpoSpec,
  specFile: string,
  common: { file: string; source?: string; python?: string; environment: readonly string[]; range: readonly [number, number]; timeoutMs?: number },
  signal: AbortSignal,
  dryRunOnModel: DryRunOnModel,
): Promise<DryRunReport> {
  const [{ loadPromptPool }, { loadRenderer }] = await Promise.all([import('../../core/data/pool'), import('../../core/render')]);
  const { renderer } = await loadRenderer({ model: spec.model, ...(spec.renderer ? { renderer: spec.renderer } : {}), cacheDir: d.cacheDir, network: readNetworkSettings() });
  const pool = await loadPromptPool(spec.dataset ?? spec.dataset_configs![0]!.dataset, { specDir: path.dirname(specFile), seed: spec.seed, cacheDir: d.cacheDir, network: readNetworkSettings(), signal });
  const service = await d.connection.open(await readBackendFor(spec.backend, spec.base_url));
  try {
    const sampler = await service.createSamplingClient({ baseModel: spec.model }, signal);
    return await dryRunOnModel({
      ...common,
      sampler,
      renderer,
      origin: spec.model,
      problems: pool.train.slice(0, Math.min(spec.groups_per_batch, 8)),
      groupSize: spec.group_size,
      maxTokens: spec.max_tokens,
      temperature: spec.temperature,
      ...(spec.stop ? { stop: spec.stop } : {}),
      signal,
    });
  } finally {
    service.close();
  }
}
