// startSftRun: what the CLI (`tinker-studio sft`) and the VS Code command share, as startGrpoRun for
// GRPO — a spec file (or a run directory to resume) in, a run directory in the cookbook layout out.
// It rejects only for problems found before the run directory exists; after that it resolves with
// status 'completed' | 'cancelled' | 'failed'.
import * as path from 'node:path';
import { loadRenderer } from '../render';
import type { RunWriter } from '../runs/runWriter';
import { trackRun } from '../runs/runTracking';
import { completedRun, logSkipped, resolveRunSpec, resolveLearningRate, runToEnd, runWriterFor, type PreparedRun, type RunStartOptions } from '../runs/startParts';
import { resumePoint } from '../runs/resumePoint';
import type { ServiceClient } from '../tinker/client';
import { DatasetError } from '../data/problem';
import { loadChats } from './data';
import { prepareInlineEvals } from '../evals/inline';
import { contextOf, fitContext } from '../data/contextFit';
import { renderedChat, SftLoopConfig, SftRun } from './loop';
import type { SftRunResult } from '../runs/runEvents';
import { parseSftSpecFile, ResolvedSftSpec, SFT_SPEC, sftSpecFromConfig } from './spec';
import { checkSameTokenizer, resolveModelSource, samplerOf, type ResolvedModelSource } from '../grpo/teachers';

export type StartSftRunOptions = RunStartOptions<ResolvedSftSpec>;

export function sftLoopConfig(spec: ResolvedSftSpec, learningRate: number): SftLoopConfig {
  return {
    model: spec.model,
    ...(spec.load_checkpoint_path ? { loadCheckpointPath: spec.load_checkpoint_path } : {}),
    loraRank: spec.lora_rank,
    learningRate,
    lrSchedule: spec.lr_schedule,
    warmupSteps: spec.warmup_steps,
    batchSize: spec.batch_size,
    ...(spec.num_epochs !== undefined ? { numEpochs: spec.num_epochs } : {}),
    ...(spec.max_steps !== undefined ? { maxSteps: spec.max_steps } : {}),
    trainOnWhat: spec.train_on_what,
    ...(spec.max_length !== undefined ? { maxLength: spec.max_length } : {}),
    evalEvery: spec.eval_every,
    saveEvery: spec.save_every,
    seed: spec.seed,
    ...(spec.ttl_seconds !== undefined ? { ttlSeconds: spec.ttl_seconds } : {}),
    ...(spec.checkpoint_metadata ? { checkpointMetadata: spec.checkpoint_metadata } : {}),
    ...(spec.teacher ? { nTeacherTargets: spec.n_teacher_targets ?? 20 } : {}),
  };
}

export function startSftRun(o: StartSftRunOptions): Promise<SftRunResult> {
  return runToEnd<SftRunResult>(o.resumeDir, (resume, writers) => prepareSftRun(o, resume, writers), o);
}

/** An SFT run ready to advance (its service client connected), or the answer for a finished one. */
export type PreparedSftRun = PreparedRun<SftRunResult, SftRun, ResolvedSftSpec>;

/** Everything startSftRun does before the loop (see prepareGrpoRun). */
export async function prepareSftRun(o: StartSftRunOptions, resume: RunWriter | undefined, writers: RunWriter[]): Promise<PreparedSftRun> {
  const log = o.log ?? (() => undefined);
  const specFile = o.specFile ? path.resolve(o.specFile) : undefined;
  const spec = await resolveRunSpec<ResolvedSftSpec>(o, resume, { file: parseSftSpecFile, config: sftSpecFromConfig, resumable: SFT_SPEC.resumable }, 'startSftRun');
  const done = completedRun('sft', resume, { log, onEvent: o.onEvent });
  if (done) return { done };
  const resumeFrom = resumePoint(resume, log);

  const learningRate = resolveLearningRate(spec);
  const { renderer, warnings } = await loadRenderer({ model: spec.model, renderer: spec.renderer, cacheDir: o.cacheDir, ...(o.network ? { network: o.network } : {}) });
  for (const w of warnings) log(`warning: ${w}`);
  const specDir = specFile ? path.dirname(specFile) : resume?.dir ?? process.cwd();
  const chats = await loadChats(spec.dataset, { specDir, seed: spec.seed, cacheDir: o.cacheDir, ...(o.network ? { network: o.network } : {}), ...(o.signal ? { signal: o.signal } : {}) });
  logSkipped(chats.skipped, log);
  log(`${chats.train.length} train chats, ${chats.validation.length} validation chats; renderer ${renderer.name}; lr ${learningRate}`);

  const evals = await prepareInlineEvals(spec.evals, { runKind: 'sft', specDir, log }, o);
  let service: ServiceClient;
  try {
    service = await o.connect(spec);
  } catch (err) {
    await evals.close();
    throw err;
  }
  let tracked: { finish(): Promise<void> } | undefined;
  const close = async () => {
    service.close();
    await evals.close();
    await tracked?.finish();
  };
  try {
    // a chat longer than the model's context, named by its file:line before training
    const fitted = fitContext(chats, {
      context: await contextOf(service, spec.model, o.signal),
      policy: spec.dataset.on_invalid_line,
      tokens: (chat) => renderedChat(renderer, chat, spec.train_on_what, spec.max_length)?.modelInput.length ?? 0,
      record: 'chat',
    });
    logSkipped(fitted.skipped, log);
    if (fitted.train.length === 0) throw new DatasetError(`dataset: every training chat is too long for the model's context (first: ${fitted.skipped[0]!.where}: ${fitted.skipped[0]!.reason})`);
    // top-K distillation: the teacher resolved (on resume: as config.json stored it, so "latest" keeps
    // naming the run it named) and its tokenizer checked, before the run directory exists
    let teacher: ResolvedModelSource | undefined;
    if (spec.teacher) {
      const stored = (resume?.readConfig() as { teacher_resolved?: ResolvedModelSource } | undefined)?.teacher_resolved;
      teacher = stored ?? (await resolveModelSource(spec.teacher, { field: 'teacher', specDir, runsDirs: [o.runsDir], service, ...(o.signal ? { signal: o.signal } : {}) }));
      await checkSameTokenizer(spec.model, teacher, 'teacher', { cacheDir: o.cacheDir, ...(o.network ? { network: o.network } : {}) });
      log(`teacher: ${teacher.label} (${teacher.model}); top-${spec.n_teacher_targets ?? 20} soft targets`);
    }
    const teacherSampler = teacher ? await samplerOf(service, teacher, o.signal) : undefined;
    const writer = runWriterFor({ resume, writers, runsDir: o.runsDir, specFile, runDir: o.runDir, configExtra: o.configExtra }, spec, {
      rendererName: renderer.name,
      learningRate,
      run_kind: 'sft',
      ...(teacher ? { teacher_resolved: teacher } : {}),
    });
    tracked = trackRun(o.tracking, writer, spec, { kind: 'sft', model: spec.model, renderer: renderer.name, backend: spec.backend, lora_rank: spec.lora_rank, learning_rate: learningRate }, log);
    const run = new SftRun({
      service,
      config: sftLoopConfig(spec, learningRate),
      renderer,
      train: fitted.train,
      validation: fitted.validation,
      evals: evals.list,
      writer,
      resumeFrom,
      log,
      ...(teacherSampler ? { teacher: teacherSampler } : {}),
    });
    return { run, spec, renderer, close };
  } catch (err) {
    await close();
    throw err;
  }
}
