// What a model version was trained from and how, read from its run folders: the chain of runs (a run's
// load_checkpoint_path leads to the run that saved that state: SFT → GRPO …), each run's learning rate
// and steps, and the data files they read with line counts and hashes.
import * as path from 'node:path';
import { listRuns, summarizeRun, type CheckpointRecord } from '../runs/runDirectory';
import { readRunConfig, type RunConfig } from '../runs/runConfig';
import { runKindOfConfig } from '../spec/kinds';
import { sha256File } from '../suite/store';
import type { DataFileSummary, RecipeRun } from './registry';

/** Keys of config.json that name files but not training data. */
const NOT_DATA = new Set(['log_path', 'spec_file', 'reward', 'env', 'wandb', 'resumes', 'sweep']);
const DATA_FILE_RE = /\.(jsonl|json|csv|parquet|txt)$/i;
/** how deep a warm-start chain is followed before it is taken to loop */
const MAX_CHAIN = 16;

export interface RunFacts {
  dir: string;
  config: RunConfig;
  kind: string;
  checkpoints: CheckpointRecord[];
  steps: number;
}

export async function runFacts(dir: string): Promise<RunFacts> {
  const abs = path.resolve(dir);
  const config = await readRunConfig(abs);
  if (!config) throw new Error(`${abs} is not a run folder (no config.json)`);
  const s = await summarizeRun(abs);
  return { dir: abs, config, kind: runKindOfConfig(config) ?? String(config['run_kind'] ?? 'unknown'), checkpoints: s.checkpoints, steps: s.steps };
}

/** The run's final checkpoint (`final`), else its last one with sampler weights; undefined when it has none. */
export function finalCheckpoint(f: Pick<RunFacts, 'checkpoints'>): CheckpointRecord | undefined {
  const fin = [...f.checkpoints].reverse().find((c) => c.final === true || c.name === 'final');
  return fin ?? [...f.checkpoints].reverse().find((c) => c.sampler_path);
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const numOf = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function plannedOf(c: RunConfig): string | undefined {
  const parts = ['iterations', 'max_steps', 'num_epochs'].flatMap((k) => (numOf(c[k]) !== undefined ? [`${k} ${c[k]}`] : []));
  return parts.length ? parts.join(', ') : undefined;
}

function recipeRun(f: RunFacts, registryDir: string, checkpoint: CheckpointRecord | undefined): RecipeRun {
  const c = f.config;
  return {
    kind: f.kind,
    run_dir: path.relative(registryDir, f.dir) || '.',
    ...(str(c['name']) ? { name: str(c['name']) } : {}),
    ...(numOf(c['learning_rate']) !== undefined ? { learning_rate: numOf(c['learning_rate']) } : {}),
    ...(str(c['lr_schedule']) ? { lr_schedule: str(c['lr_schedule']) } : {}),
    steps: f.steps,
    ...(plannedOf(c) ? { planned: plannedOf(c) } : {}),
    ...(str(c['load_checkpoint_path']) ? { load_checkpoint_path: str(c['load_checkpoint_path']) } : {}),
    ...(checkpoint?.state_path ? { checkpoint: checkpoint.state_path } : {}),
  };
}

/** The run folder (under `searchDirs`) that saved this state path. */
async function runThatSaved(statePath: string, searchDirs: readonly string[]): Promise<{ dir: string; checkpoint: CheckpointRecord } | undefined> {
  for (const d of searchDirs) {
    for (const r of await listRuns(d)) {
      const c = r.checkpoints.find((x) => x.state_path === statePath || x.sampler_path === statePath);
      if (c) return { dir: r.dir, checkpoint: c };
    }
  }
  return undefined;
}

/**
 * The recipe ending with `runDir` (at `checkpoint`), oldest run first: each warm start is followed to
 * the run that saved it in the same runs folder (or `searchDirs`); a start from weights no local run
 * saved ends the chain there (its path stays in the first run's load_checkpoint_path).
 */
export async function recipeOf(runDir: string, checkpoint: CheckpointRecord | undefined, registryDir: string, searchDirs: readonly string[] = [path.dirname(path.resolve(runDir))]): Promise<{ recipe: RecipeRun[]; runs: RunFacts[] }> {
  const runs: RunFacts[] = [];
  const recipe: RecipeRun[] = [];
  let facts = await runFacts(runDir);
  let ckpt = checkpoint;
  const seen = new Set<string>();
  for (let i = 0; i < MAX_CHAIN; i++) {
    seen.add(facts.dir);
    runs.unshift(facts);
    recipe.unshift(recipeRun(facts, registryDir, ckpt));
    const from = str(facts.config['load_checkpoint_path']);
    if (!from) break;
    const prev = await runThatSaved(from, searchDirs);
    if (!prev || seen.has(prev.dir)) break;
    facts = await runFacts(prev.dir);
    ckpt = prev.checkpoint;
  }
  return { recipe, runs };
}

/** The data files a run's config names (dataset paths, holdouts, pairs …), absolute, with the field that named each. */
export function dataFilesOf(f: RunFacts): { file: string; usedAs: string }[] {
  const c = f.config;
  const base = c.spec_file ? path.dirname(path.resolve(c.spec_file)) : f.dir;
  const out: { file: string; usedAs: string }[] = [];
  const walk = (v: unknown, at: string[]) => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...at, String(i)]));
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) if (!(at.length === 0 && NOT_DATA.has(k))) walk(x, [...at, k]);
    } else if (typeof v === 'string' && DATA_FILE_RE.test(v) && !v.startsWith('tinker://') && !/^https?:/.test(v) && ['path', 'file'].includes(at[at.length - 1] ?? '')) {
      out.push({ file: path.resolve(base, v), usedAs: `${f.kind} ${at.join('.')}` });
    }
  };
  walk(c, []);
  return out;
}

/** Hugging Face datasets a run's config names (no local file to hash). */
function hfDatasetsOf(f: RunFacts): string[] {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o['hf'] === 'object' && o['hf'] && typeof (o['hf'] as Record<string, unknown>)['dataset'] === 'string') out.push(String((o['hf'] as Record<string, unknown>)['dataset']));
      Object.values(o).forEach(walk);
    }
  };
  walk(f.config);
  return [...new Set(out)];
}

/** Every data file of the recipe's runs with its line count and sha256 now (one line per file and use). */
export async function dataSummary(runs: readonly RunFacts[], registryDir: string): Promise<DataFileSummary[]> {
  const out: DataFileSummary[] = [];
  const seen = new Set<string>();
  for (const r of runs) {
    for (const d of dataFilesOf(r)) {
      const key = `${d.file}\0${d.usedAs}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const rel = path.relative(registryDir, d.file) || d.file;
      try {
        const h = await sha256File(d.file);
        out.push({ file: rel, used_as: d.usedAs, lines: h.lines, sha256: h.sha256 });
      } catch {
        out.push({ file: rel, used_as: d.usedAs, note: 'the file is gone' });
      }
    }
    for (const hf of hfDatasetsOf(r)) out.push({ file: `hf:${hf}`, used_as: `${r.kind} dataset`, note: 'a Hugging Face dataset (not hashed)' });
  }
  return out;
}
