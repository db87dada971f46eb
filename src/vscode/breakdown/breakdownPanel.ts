// The GRPO group breakdown panel's host side: one panel per run directory showing one iteration
// (training or holdout evaluation) at a time. It reads that iteration's samples file (one schema,
// src/core/runs/sampleRecord.ts), the step's KL and entropy from metrics.jsonl, and says what is
// missing when there are no samples (Python tinker-cookbook runs). Stepping to another iteration
// is a `show` message; the webview keeps its filters.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { METRIC } from '../../protocol/metricKeys';
import { COMMAND } from '../common/commandIds';
import { BreakdownProtocol, BreakdownRequests, FromWebview, IterationRef, ToWebview } from '../../protocol/breakdownProtocol';
import { MetricsRecord, readMetricsRows } from '../../core/runs/runDirectory';
import { envFileOfConfig, readRunConfig, rewardFileOfConfig } from '../../core/runs/runConfig';
import { describeMissingSamples, HOLDOUT, readSamples, readSamplesInChunks, sampledIterations, SampleSplit, SamplesRead } from '../../core/runs/sampleRecord';
import type { JsonlProblem } from '../../core/runs/jsonl';
import { parsedMessageFields, SampleRecord, summarizeIteration } from '../../protocol/sampleSchema';
import { SearchIndex, searchGroups, searchIndex } from '../../protocol/breakdown';
import type { Log } from '../common/log';
import { showPanelPage } from '../common/webview/html';
import { PanelHost, RequestHandlers } from '../common/webview/panelHost';
import type { WebviewTransport } from '../common/webview/transport';
import { errorMessage } from '../../core/errors';

export interface BreakdownPanelServices {
  extensionUri: vscode.Uri;
  log: Log;
}

const splitOf = (ref: IterationRef): SampleSplit => (ref.split === 'train' ? { kind: 'train' } : HOLDOUT);

export class BreakdownPanel extends PanelHost<ToWebview, FromWebview, typeof BreakdownRequests> {
  protected readonly requestHandlers: RequestHandlers<typeof BreakdownRequests> = {
    sample: async ({ ref, groupIdx, trajIdx }) => {
      const s = (await this.samplesOf(ref)).records.find((r) => r.group_idx === groupIdx && r.traj_idx === trajIdx);
      if (!s) throw new Error(`iteration ${ref.iteration} has no sample ${trajIdx} in group ${groupIdx}`);
      return {
        completion: s.completion,
        content: s.content,
        tokens: s.completion_tokens,
        logprobs: s.logprobs,
        ...(s.teacher_logprobs ? { teacher_logprobs: s.teacher_logprobs } : {}),
        ...parsedMessageFields(s),
        ...(s.transcript ? { transcript: s.transcript } : {}),
      };
    },
    search: async ({ ref, text }) => {
      const read = await this.samplesOf(ref);
      read.index ??= searchIndex(read.records);
      return { groups: searchGroups(read.index, text) };
    },
  };

  /** The shown iteration's records (still being read while the first groups are shown), for the panel's requests. */
  private cached: { ref: IterationRef; read: Promise<{ records: SampleRecord[]; index?: SearchIndex }> } | undefined;
  /** bumped per snapshot so that a read overtaken by another iteration posts nothing */
  private generation = 0;

  private async samplesOf(ref: IterationRef): Promise<{ records: SampleRecord[]; index?: SearchIndex }> {
    const c = this.cached;
    if (c && c.ref.iteration === ref.iteration && c.ref.split === ref.split) return c.read;
    const read = this.recordsOf(ref, readSamples(this.runDir, ref.iteration, splitOf(ref)));
    this.cached = { ref, read };
    return read;
  }

  private async recordsOf(ref: IterationRef, reading: Promise<SamplesRead | undefined>): Promise<{ records: SampleRecord[] }> {
    const r = await reading;
    if (!r) throw new Error(`iteration ${ref.iteration} of ${this.runDir} has no ${ref.split} samples`);
    return { records: r.records };
  }

  constructor(
    panel: vscode.WebviewPanel,
    readonly runDir: string,
    /** the iteration shown; undefined shows the last sampled training iteration */
    private shownRef: IterationRef | undefined,
    s: BreakdownPanelServices,
    transport: WebviewTransport,
  ) {
    super(panel, transport, BreakdownProtocol, s.log, `group breakdown ${runDir}`);
    showPanelPage(panel, s.extensionUri, { entry: 'breakdown', title: 'GRPO groups' });
    this.updateTitle();
  }

  /** the iteration shown */
  get shown(): IterationRef | undefined {
    return this.shownRef;
  }

  /** Shows another iteration of the run (the panel keeps its filters). */
  async show(ref: IterationRef): Promise<void> {
    this.shownRef = ref;
    this.updateTitle();
    await this.sendSnapshot();
  }

  private updateTitle(): void {
    const it = this.shownRef ? ` #${this.shownRef.iteration}${this.shownRef.split === 'eval' ? ' (eval)' : ''}` : '';
    this.panel.title = `Groups: ${path.basename(this.runDir)}${it}`;
  }

  protected override async onNotification(msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case 'show':
        await this.show(msg.ref);
        break;
      case 'openRewardFile':
        await this.openRewardFile(msg.line);
        break;
      case 'compareBestWorst':
        await vscode.commands.executeCommand(COMMAND.compareSamples, { runDir: this.runDir, iteration: msg.ref.iteration, split: msg.ref.split, groupIdx: msg.groupIdx });
        break;
      case 'compareEvaluations':
        await vscode.commands.executeCommand(COMMAND.compareEvaluations, { runDir: this.runDir, iteration: msg.ref.iteration, groupIdx: msg.groupIdx, trajIdx: msg.trajIdx });
        break;
      case 'compareRuns':
        await vscode.commands.executeCommand(COMMAND.compareRuns, { runDir: this.runDir, iteration: msg.ref.iteration, split: msg.ref.split, groupIdx: msg.groupIdx, trajIdx: msg.trajIdx });
        break;
      case 'whatChanged':
        await vscode.commands.executeCommand(COMMAND.whatChanged, { runDir: this.runDir, after: msg.ref.iteration });
        break;
      case 'openInPlayground':
        await vscode.commands.executeCommand(COMMAND.openPlayground, { runDir: this.runDir, problemId: msg.problemId });
        break;
      case 'webviewError':
        this.log.warn(`group breakdown ${this.runDir}: ${msg.message}`);
        break;
    }
  }

  protected override async sendSnapshot(): Promise<void> {
    try {
      const [available, metrics, config] = await Promise.all([sampledIterations(this.runDir), metricRows(this.runDir), readRunConfig(this.runDir).catch(() => undefined)]);
      const ref = this.shownRef ?? { iteration: available.train.at(-1) ?? metrics.at(-1)?.step ?? 0, split: 'train' as const };
      this.shownRef = ref;
      this.updateTitle();
      const generation = ++this.generation;
      const rewardless = ref.split === 'train' && config !== undefined && (config['teacher'] !== undefined || config['dataset_configs'] !== undefined) && config.reward === undefined && config.env === undefined;
      // the env file's name (the spec's path may be absolute): what the doctor and the error links name
      const envFile = config?.env ? path.basename(config.env.file) : undefined;
      const base = { type: 'snapshot' as const, runName: path.basename(this.runDir), runDir: this.runDir, shown: ref, available, step: stepMetrics(metrics, ref.iteration), ...(rewardless ? { rewardless } : {}), ...(envFile !== undefined ? { envFile } : {}) };
      const problemLines = (problems: readonly JsonlProblem[]) => problems.map((p) => `${path.basename(p.file)}:${p.line}: ${p.message}`);
      // a large file paints its first groups while the rest is read and validated
      const reading = readSamplesInChunks(this.runDir, ref.iteration, splitOf(ref), (first) => {
        if (generation !== this.generation) return;
        this.post({ ...base, ...summarizeIteration(first.records), problems: problemLines(first.problems), loading: { bytesRead: first.bytesRead, bytesTotal: first.bytesTotal } });
      });
      this.cached = { ref, read: this.recordsOf(ref, reading) };
      // a failed read is reported below; requests made meanwhile get the same error
      this.cached.read.catch(() => undefined);
      const read = await reading;
      if (generation !== this.generation) return;
      for (const p of read?.problems ?? []) this.log.warn(`${p.file}:${p.line}: ${p.message}`);
      this.post({
        ...base,
        ...summarizeIteration(read?.records ?? []),
        ...(read ? {} : { missing: await describeMissingSamples(this.runDir, ref.iteration, splitOf(ref)) }),
        problems: problemLines(read?.problems ?? []),
      });
    } catch (err) {
      this.log.error(`group breakdown: could not read ${this.runDir}`, err);
      this.post({ type: 'error', message: `Could not read the samples of ${this.runDir}: ${errorMessage(err)}` });
    }
  }

  /** Opens the run's reward file (an environment run: its env file) at `line`. */
  private async openRewardFile(line: number | undefined): Promise<void> {
    const config = await readRunConfig(this.runDir);
    const file = config && (rewardFileOfConfig(config, this.runDir) ?? envFileOfConfig(config, this.runDir));
    if (!file) {
      void vscode.window.showWarningMessage(`The config.json of ${path.basename(this.runDir)} names no reward or env file.`);
      return;
    }
    const at = new vscode.Position(Math.max((line ?? 1) - 1, 0), 0);
    await vscode.window.showTextDocument(vscode.Uri.file(file), { selection: new vscode.Range(at, at), viewColumn: vscode.ViewColumn.Beside });
  }
}

/** KL (v1) and entropy logged for `step`. */
function stepMetrics(rows: readonly MetricsRecord[], step: number): { kl: number | null; entropy: number | null } {
  const row = rows.find((r) => r.step === step);
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return { kl: num(row?.[METRIC.klV1]), entropy: num(row?.[METRIC.entropy]) };
}

async function metricRows(runDir: string): Promise<MetricsRecord[]> {
  try {
    return await readMetricsRows(runDir);
  } catch {
    return [];
  }
}
