// "Export as Inspect log": an eval's results written as Inspect AI eval logs (its JSON log format,
// version 2), one log per target, so `inspect view` can open them. Field names follow Inspect's
// published log schema (EvalLog: version, status, eval, plan, results, stats, samples); each of our
// n samples of a problem is one Inspect epoch of that sample.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readEvalResults, readTargetSamples, type EvalSummary } from './results';
import type { SampleRecord } from '../../protocol/sampleSchema';
import { writeZip } from '../fs/zip';

const stopReason = (r: SampleRecord) => (r.stop_reason === 'length' ? 'max_tokens' : r.stop_reason === 'stop' ? 'stop' : 'unknown');

/** The Inspect eval log (JSON) of one target. */
export function inspectLogOf(summary: EvalSummary, targetId: string, samples: readonly SampleRecord[]): Record<string, unknown> {
  const t = summary.targets.find((x) => x.id === targetId);
  if (!t) throw new Error(`no target ${targetId} in the eval ${summary.name}`);
  const reward = t.metrics.reward;
  if (summary.grading === 'nll' || !reward) throw new Error(`the eval ${summary.name} sampled nothing (an NLL eval): an Inspect log holds samples`);
  const thr = summary.correct_threshold ?? 0.5;
  const problemIds = summary.problems.map((p) => p.problem_id);
  const order = new Map(problemIds.map((id, i) => [id, i]));
  const sorted = [...samples].filter((r) => order.has(r.problem_id) && r.traj_idx < summary.n).sort((a, b) => order.get(a.problem_id)! - order.get(b.problem_id)! || a.traj_idx - b.traj_idx);
  const metric = (name: string, value: number) => ({ name, value, params: {} });
  const scores = [
    {
      name: 'reward',
      scorer: 'reward',
      params: { grader: summary.spec_file },
      metrics: { mean: metric('mean', reward.value), ...(reward.lo !== undefined ? { ci_low: metric('ci_low', reward.lo), ci_high: metric('ci_high', reward.hi!) } : {}) },
    },
    {
      name: 'correct',
      scorer: 'correct',
      params: { correct_threshold: thr },
      metrics: Object.fromEntries(Object.entries(t.metrics.pass_at ?? {}).map(([k, e]) => [k, metric(k, e.value)])),
    },
  ];
  const model = t.source.kind === 'base' ? t.model : `tinker/${t.label}`;
  return {
    version: 2,
    status: summary.complete ? 'success' : 'cancelled',
    eval: {
      eval_id: `${summary.name}-${targetId}`,
      run_id: summary.name,
      created: summary.created_at,
      task: summary.name,
      task_id: summary.name,
      task_version: 0,
      task_file: summary.spec_file,
      task_attribs: {},
      task_args: {},
      // the eval takes its problems from the dataset shuffled with seed 0 (loadEvalProblems), in that order
      dataset: { name: summary.name, location: summary.spec_file, samples: summary.problems.length, sample_ids: problemIds, shuffled: true },
      model,
      model_args: {},
      config: { epochs: summary.n, epochs_reducer: ['mean'] },
      packages: { 'tinker-studio': '0.1.0' },
      metadata: { tinker_studio_target: t.id, source: t.source },
    },
    plan: { name: 'plan', steps: [{ solver: 'generate', params: {} }], config: {} },
    results: { total_samples: summary.problems.length * summary.n, completed_samples: sorted.length, scores },
    stats: { started_at: summary.created_at, completed_at: summary.updated_at, model_usage: {} },
    samples: sorted.map((r) => {
      const input = r.question ?? r.prompt;
      return {
        id: r.problem_id,
        epoch: r.traj_idx + 1,
        input,
        target: r.ground_truth,
        messages: [
          { role: 'user', content: input, source: 'input' },
          { role: 'assistant', content: r.content, source: 'generate', model },
        ],
        output: {
          model,
          choices: [{ message: { role: 'assistant', content: r.content, source: 'generate', model }, stop_reason: stopReason(r) }],
          usage: { input_tokens: 0, output_tokens: r.completion_tokens.length, total_tokens: r.completion_tokens.length },
        },
        scores: {
          reward: { value: r.reward, answer: r.content, ...(r.reward_error ? { explanation: `${r.reward_error.kind}: ${r.reward_error.message}` } : {}) },
          correct: { value: r.reward >= thr ? 'C' : 'I', answer: r.content },
        },
        metadata: { completion: r.completion, termination: r.termination },
        store: {},
        events: [],
        model_usage: {},
      };
    }),
  };
}

/**
 * The same log as Inspect's `.eval` file: a ZIP of header.json (the log without its samples),
 * samples/<id>_epoch_<epoch>.json and summaries.json, the entries Inspect's own reader takes.
 */
export function inspectEvalZipOf(log: Record<string, unknown>): Buffer {
  const { samples, ...header } = log as { samples: Array<Record<string, unknown>> };
  const summaries = samples.map((s) => ({ id: s['id'], epoch: s['epoch'], input: s['input'], target: s['target'], scores: s['scores'] }));
  return writeZip([
    { name: 'header.json', data: JSON.stringify(header) },
    ...samples.map((s) => ({ name: `samples/${String(s['id'])}_epoch_${String(s['epoch'])}.json`, data: JSON.stringify(s) })),
    { name: 'summaries.json', data: JSON.stringify(summaries) },
  ]);
}

/** Writes one Inspect log per target into `outDir` (default `<results>/inspect/`), as JSON or `.eval` (ZIP); returns the files. */
export function exportInspectLogs(resultsDir: string, outDir = path.join(resultsDir, 'inspect'), format: 'json' | 'eval' = 'json'): string[] {
  const { summary } = readEvalResults(resultsDir);
  fs.mkdirSync(outDir, { recursive: true });
  const stamp = summary.created_at.replace(/[:.]/g, '-');
  return summary.targets.map((t) => {
    const file = path.join(outDir, `${stamp}_${summary.name}_${t.id}.${format}`);
    const log = inspectLogOf(summary, t.id, readTargetSamples(resultsDir, t.id));
    fs.writeFileSync(file, format === 'eval' ? inspectEvalZipOf(log) : JSON.stringify(log, null, 2) + '\n');
    return file;
  });
}
