// The documents of an evaluation's samples under the tinker-sample: scheme (authority `eval`), for the
// diff editor: one problem's samples of one target (all of them, or the k-th). The records come
// from the results folders the panels have read, else from the folder on disk (a closed panel, a
// reload).
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { SampleRecord } from '../../protocol/sampleSchema';
import { registerSampleSource, SAMPLE_SCHEME } from '../samples/sampleDocuments';
import { readTargetSamples } from '../../core/evals/results';
import { parsedReplyLines } from '../../core/runs/sampleText';

export const EVAL_AUTHORITY = 'eval';

/** The records of each loaded results folder, by folder, then target id. */
const loaded = new Map<string, Map<string, readonly SampleRecord[]>>();

export function rememberResults(dir: string, targets: ReadonlyArray<{ id: string; records: readonly SampleRecord[] }>): void {
  loaded.set(path.resolve(dir), new Map(targets.map((t) => [t.id, t.records])));
}

export function forgetResults(dir: string): void {
  loaded.delete(path.resolve(dir));
}

/** A problem's samples of a target (all, or the k-th of them), titled `label`. */
export function evalSampleUri(dir: string, target: string, problemId: string, k: number | undefined, label: string): vscode.Uri {
  const query = new URLSearchParams({ dir, t: target, p: problemId, ...(k !== undefined ? { k: String(k) } : {}) });
  return vscode.Uri.from({ scheme: SAMPLE_SCHEME, authority: EVAL_AUTHORITY, path: `/${path.basename(dir)}/${label.replace(/[/\\]/g, '∕')}`, query: query.toString() });
}

/** The samples of a problem in a target's records, in sample order. */
export function problemSamples(records: readonly SampleRecord[], problemId: string): SampleRecord[] {
  return records.filter((r) => r.problem_id === problemId).sort((a, b) => a.group_idx - b.group_idx || a.traj_idx - b.traj_idx);
}

/** A sample as diffable text: the same lines for every target, so the values line up. */
export function evalSampleText(target: string, s: SampleRecord, index: number, of: number): string {
  const lines = [
    `# ${target} · sample ${index + 1} of ${of}`,
    `problem:      ${s.problem_id}`,
    `reward:       ${s.reward}`,
    `stop reason:  ${s.stop_reason} (${s.termination})`,
    `tokens:       ${s.completion_tokens.length}`,
    `ground truth: ${s.ground_truth}`,
  ];
  if (s.reward_error) lines.push(`reward error: ${s.reward_error.kind}: ${s.reward_error.message}`);
  lines.push('', '## prompt', s.prompt.replace(/\n$/, ''), '', '## completion', s.completion, ...parsedReplyLines(s), '');
  return lines.join('\n');
}

function read(uri: vscode.Uri): string | undefined {
  const q = new URLSearchParams(uri.query);
  const dir = q.get('dir');
  const target = q.get('t');
  const problem = q.get('p');
  if (!dir || !target || !problem) return undefined;
  let records = loaded.get(path.resolve(dir))?.get(target);
  if (!records) {
    try {
      records = readTargetSamples(dir, target);
    } catch (err) {
      return `# ${target}: ${err instanceof Error ? err.message : String(err)}\n`;
    }
  }
  const samples = problemSamples(records, problem);
  const k = q.get('k');
  if (k !== null) {
    const s = samples[Number(k)];
    return s ? evalSampleText(target, s, Number(k), samples.length) : `# ${target} has no sample ${Number(k) + 1} of ${problem}\n`;
  }
  if (!samples.length) return `# ${target} has no samples of ${problem}\n`;
  return samples.map((s, i) => evalSampleText(target, s, i, samples.length)).join('\n');
}

export function registerEvalSampleDocuments(): vscode.Disposable {
  return registerSampleSource(EVAL_AUTHORITY, read);
}
