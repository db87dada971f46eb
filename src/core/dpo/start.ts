// startDpoRun: what the CLI (`tinker-studio dpo`) and the VS Code command share, as startSftRun for
// SFT — a spec file (or a run directory to resume) in, a run directory in the cookbook layout out.
import * as path from 'node:path';
import type { RunWriter } from '../runs/runWriter';
import { logSkipped, type PreparedRun, type RunStartOptions } from '../runs/startParts';
import { prepareRun, startRun, type KindStarter } from '../runs/prepareRun';
import type { DpoRunResult } from '../runs/runEvents';
import { DatasetError } from '../data/problem';
import { splitValidation } from '../training/batches';
import { supervisedLoopConfig } from '../training/stepOpening';
import { RendererError } from '../render/errors';
import { contextOf, fitContext } from '../data/contextFit';
import { fullSequence, pairDatums } from './datums';
import { DpoLoopConfig, DpoRun } from './loop';
import { readPairsFile, type PairSplit } from './pairs';
import { DPO_DEFAULT_LEARNING_RATE, DPO_SPEC, dpoSpecFromConfig, parseDpoSpecFile, ResolvedDpoSpec, type DpoDatasetSpec } from './spec';

export type StartDpoRunOptions = RunStartOptions<ResolvedDpoSpec>;

export function dpoLoopConfig(spec: ResolvedDpoSpec, learningRate: number): DpoLoopConfig {
  return { ...supervisedLoopConfig(spec, learningRate), beta: spec.dpo_beta, nllWeight: spec.nll_weight };
}

/** How a pairs file is named in pair ids (`<label>:<line>`): relative to the spec's folder when inside it, else absolute. */
export function labelOf(file: string, specDir: string): string {
  const rel = path.relative(specDir, path.resolve(specDir, file));
  return rel.startsWith('..') || path.isAbsolute(rel) ? path.resolve(specDir, file) : rel.split(path.sep).join('/');
}

/** The pairs of a DPO spec: the file's, split into train and validation as SFT's chats (by the seed, or a validation file). */
export async function loadPairs(d: DpoDatasetSpec, o: { specDir: string; seed: number }): Promise<PairSplit> {
  const main = await readPairsFile(path.resolve(o.specDir, d.path), labelOf(d.path, o.specDir), d.on_invalid_line);
  const skipped = [...main.skipped];
  let train = main.pairs;
  let validation = [] as typeof train;
  const v = d.validation;
  if (v?.path !== undefined) {
    const loaded = await readPairsFile(path.resolve(o.specDir, v.path), labelOf(v.path, o.specDir), d.on_invalid_line);
    for (const x of loaded.skipped) skipped.push(x);
    if (loaded.pairs.length === 0) throw new DatasetError(`dataset.validation.path: ${labelOf(v.path, o.specDir)} has no pairs`);
    validation = loaded.pairs;
  } else if (v?.fraction !== undefined) ({ train, validation } = splitValidation(main.pairs, v.fraction, o.seed));
  if (train.length === 0)
    throw new DatasetError(main.pairs.length === 0 ? `dataset: ${labelOf(d.path, o.specDir)} has no valid pairs${skipped.length ? ` (${skipped.length} lines skipped; first: ${skipped[0]!.where}: ${skipped[0]!.reason})` : ''}` : 'dataset: no training pairs are left after the validation split');
  return { train, validation, skipped };
}

/** DPO's parts of the start sequence (runs/prepareRun.ts): its pairs. */
const DPO_START: KindStarter<ResolvedDpoSpec, DpoRunResult, DpoRun, PairSplit> = {
  kind: 'dpo',
  starter: 'startDpoRun',
  read: { file: parseDpoSpecFile, config: dpoSpecFromConfig, resumable: DPO_SPEC.resumable },
  learningRate: (spec) => spec.learning_rate ?? DPO_DEFAULT_LEARNING_RATE,
  async load({ spec, specDir, log }) {
    const pairs = await loadPairs(spec.dataset, { specDir, seed: spec.seed });
    logSkipped(pairs.skipped, log);
    return { data: pairs, sizes: `${pairs.train.length} train pairs, ${pairs.validation.length} validation pairs`, note: `β ${spec.dpo_beta}` };
  },
  // a pair longer than the model's context, named by its file:line before training; the longest request
  // is the reference scoring a side's whole sequence, which also samples one token (computeLogprobs)
  async connected({ spec, o, renderer, log }, service, pairs) {
    const fitted = fitContext(pairs, {
      context: await contextOf(service, spec.model, o.signal),
      policy: spec.dataset.on_invalid_line,
      tokens: (pair) => {
        let d: ReturnType<typeof pairDatums>;
        try {
          d = pairDatums(renderer, pair, spec.max_length);
        } catch (err) {
          if (err instanceof RendererError) throw new DatasetError(`${pair.id}: ${err.message}`);
          throw err;
        }
        return typeof d === 'string' ? 0 : Math.max(fullSequence(d.chosen).length, fullSequence(d.rejected).length) + 1;
      },
      record: 'pair',
    });
    logSkipped(fitted.skipped, log);
    if (fitted.train.length === 0) throw new DatasetError(`dataset: every training pair is too long for the model's context (first: ${fitted.skipped[0]!.where}: ${fitted.skipped[0]!.reason})`);
    return { ...pairs, train: fitted.train, validation: fitted.validation };
  },
  config: () => ({ run_kind: 'dpo' }),
  run: ({ spec, renderer, learningRate, log }, pairs, { service, writer, resumeFrom }) =>
    new DpoRun({ service, config: dpoLoopConfig(spec, learningRate), renderer, train: pairs.train, validation: pairs.validation, writer, resumeFrom, log }),
};

export function startDpoRun(o: StartDpoRunOptions): Promise<DpoRunResult> {
  return startRun(DPO_START, o);
}

export type PreparedDpoRun = PreparedRun<DpoRunResult, DpoRun, ResolvedDpoSpec>;

/** Everything startDpoRun does before the loop (see prepareSftRun). */
export function prepareDpoRun(o: StartDpoRunOptions, resume: RunWriter | undefined, writers: RunWriter[]): Promise<PreparedDpoRun> {
  return prepareRun(DPO_START, o, resume, writers);
}
