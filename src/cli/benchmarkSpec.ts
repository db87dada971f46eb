// `tinker-studio eval --benchmark <name> <target>`: the eval spec the command stands for, written
// into its results folder (evals/<benchmark>-<target>/<same>.eval.json) so that the eval panel can
// reopen and re-run it, and the same command finds the same folder to resume.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomicSync } from '../core/fs/atomic';
import { parseEvalSpecValue, type LoadedEvalSpec } from '../core/evals/spec';
import { targetIdOf } from '../core/evals/runEval';
import type { EvalArgs } from './args';

export function benchmarkEvalSpec(b: NonNullable<EvalArgs['benchmark']>, o: { cwd: string; out?: string; backend?: 'local' | 'cloud' | 'custom'; baseUrl?: string }): { loaded: LoadedEvalSpec; out: string } {
  const local = path.resolve(o.cwd, b.target);
  // a run directory on disk: its sampler checkpoints; else a base model or a tinker:// path
  const target = !b.target.startsWith('tinker://') && fs.existsSync(local) && fs.statSync(local).isDirectory() ? { run: local, checkpoints: 'all' as const } : b.target;
  const name = `${b.name}-${targetIdOf(typeof target === 'string' ? target : path.basename(local))}`;
  const out = path.resolve(o.out ?? path.join(o.cwd, 'evals', name));
  const value = {
    name,
    benchmark: b.name,
    targets: [target],
    ...(b.maxProblems !== undefined ? { max_problems: b.maxProblems } : {}),
    ...(b.maxTokens !== undefined ? { max_tokens: b.maxTokens } : {}),
    ...(b.concurrency !== undefined ? { concurrency: b.concurrency } : {}),
    ...(b.model !== undefined ? { model: b.model } : {}),
    ...(o.backend ? { backend: o.backend } : {}),
    ...(o.baseUrl ? { base_url: o.baseUrl } : {}),
  };
  const file = path.join(out, `${name}.eval.json`);
  const loaded = parseEvalSpecValue(value, file);
  fs.mkdirSync(out, { recursive: true });
  writeFileAtomicSync(file, JSON.stringify(value, null, 2) + '\n');
  return { loaded, out };
}
