// A results folder as the eval runner writes it (summary.json, eval.json, targets/<id>/samples.jsonl),
// for the panel's host and UI tests: a base model and a run's checkpoints at steps 10, 20, …, on
// `problems` arithmetic problems with `n` samples each. The rewards follow a fixed pattern: the base
// solves every 4th problem, each later checkpoint more, and the last regresses on a few.
import * as fs from 'fs';
import * as path from 'path';
import type { SampleRecord } from '../../../src/protocol/sampleSchema';
import { EvalSummary } from '../../../src/core/evals/results';

export interface FixtureOptions {
  checkpoints: number;
  problems: number;
  n: number;
}

export function rewardOf(target: number, problem: number, k: number): number {
  if (target === 0) return problem % 4 === 0 ? 1 : 0;
  const solved = (problem * 7 + k) % 10 < 3 + 2 * target;
  const regressed = target > 1 && problem % 5 === 1;
  return solved && !regressed ? 1 : 0;
}

export function writeEvalResults(dir: string, o: FixtureOptions): string {
  fs.mkdirSync(path.join(dir, 'targets'), { recursive: true });
  const targets = [
    { id: 'base', label: 'tinker-studio/arith-gpt', source: { kind: 'base' as const, model: 'tinker-studio/arith-gpt' } },
    ...Array.from({ length: o.checkpoints }, (_, i) => {
      const name = String(10 * (i + 1)).padStart(6, '0');
      return { id: `arith-${name}`, label: `arith/${name}`, source: { kind: 'checkpoint' as const, path: `tinker://arith/sampler_weights/${name}`, run_dir: '/runs/arith', checkpoint: name, step: 10 * (i + 1) } };
    }),
  ];
  const est = (xs: number[]) => {
    const m = xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);
    return { value: m, lo: Math.max(0, m - 0.05), hi: Math.min(1, m + 0.05) };
  };
  const rows = Array.from({ length: o.problems }, (_, p) => ({ problem_id: `arith:${p}`, question: `What is ${p} + 1?`, ground_truth: String(p + 1), targets: {} as Record<string, { reward: number; correct: number; samples: number }> }));
  const summaries = targets.map((t, ti) => {
    const recs: SampleRecord[] = [];
    const perProblem: number[] = [];
    for (let p = 0; p < o.problems; p++) {
      let sum = 0;
      for (let k = 0; k < o.n; k++) {
        const reward = rewardOf(ti, p, k);
        sum += reward;
        const completion = reward ? String(p + 1) : String(p + 2);
        recs.push({ group_idx: p, traj_idx: k, problem_id: `arith:${p}`, prompt: `user: What is ${p} + 1?\n`, question: `What is ${p} + 1?`, completion, content: completion, ground_truth: String(p + 1), completion_tokens: [49, 50], logprobs: [-0.1, -0.2], reward, advantage: 0, stop_reason: 'stop', termination: 'eos' });
      }
      perProblem.push(sum / o.n);
      rows[p]!.targets[t.id] = { reward: sum / o.n, correct: sum, samples: o.n };
    }
    fs.mkdirSync(path.join(dir, 'targets', t.id), { recursive: true });
    fs.writeFileSync(path.join(dir, 'targets', t.id, 'samples.jsonl'), recs.map((r) => JSON.stringify(r)).join('\n') + '\n');
    return { ...t, model: 'tinker-studio/arith-gpt', problems: o.problems, samples: o.problems * o.n, n: o.n, metrics: { reward: est(perProblem), pass_at: { 'pass@1': est(perProblem) }, stop_rate: est([1]), completion_tokens: est([2]) }, reward_errors: 0, perProblem };
  });
  const base = summaries[0]!.perProblem;
  const summary = EvalSummary.parse({
    kind: 'eval', version: 1, name: path.basename(dir), spec_file: path.join(dir, '..', '..', `${path.basename(dir)}.eval.json`), created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z',
    complete: true, n: o.n, correct_threshold: 0.5, bootstrap: { resamples: 1000, seed: 0 }, baseline: 'base',
    targets: summaries.map(({ perProblem: _unused, ...t }) => t),
    comparisons: summaries.slice(1).map((t) => {
      const d = t.perProblem.map((v, i) => v - base[i]!);
      return { target: t.id, baseline: 'base', problems: o.problems, diff: est(d), p_value: 0.01, permutations: 10000, exact: false, wins: d.filter((x) => x > 0).length, losses: d.filter((x) => x < 0).length, ties: d.filter((x) => x === 0).length };
    }),
    problems: rows,
  });
  fs.writeFileSync(path.join(dir, 'summary.json'), JSON.stringify(summary));
  return dir;
}
