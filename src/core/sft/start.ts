// startSftRun: what the CLI (`tinker-studio sft`) and the VS Code command share, as startGrpoRun for
// GRPO — a spec file (or a run directory to resume) in, a run directory in the cookbook layout out.
// It rejects only for problems found before the run directory exists; after that it resolves with
// status 'completed' | 'cancelled' | 'failed'.
import type { RunWriter } from '../runs/runWriter';
import { logSkipped, resolveLearningRate, type PreparedRun, type RunStartOptions } from '../runs/startParts';
import { prepareRun, startRun, type KindStarter } from '../runs/prepareRun';
import type { SamplingClient } from '../tinker/client';
import { loadChats, type ChatSplit } from '../training/chats';
import { supervisedLoopConfig } from '../training/stepOpening';
import { prepareInlineEvals, type InlineEvaluators } from '../evals/inline';
import { renderedChat, SftLoopConfig, SftRun } from './loop';
import { DatasetError } from '../data/problem';
import { contextOf, fitContext } from '../data/contextFit';
import type { SftRunResult } from '../runs/runEvents';
import { parseSftSpecFile, ResolvedSftSpec, SFT_INLINE_EVALS, SFT_SPEC, sftSpecFromConfig } from './spec';
import { checkSameTokenizer, resolveModelSource, samplerOf, type ResolvedModelSource } from '../training/teachers';

export type StartSftRunOptions = RunStartOptions<ResolvedSftSpec>;

export function sftLoopConfig(spec: ResolvedSftSpec, learningRate: number): SftLoopConfig {
  return {
    ...supervisedLoopConfig(spec, learningRate),
    warmupSteps: spec.warmup_steps,
    trainOnWhat: spec.train_on_what,
    ...(spec.checkpoint_metadata ? { checkpointMetadata: spec.checkpoint_metadata } : {}),
    ...(spec.teacher ? { nTeacherTargets: spec.n_teacher_targets ?? 20 } : {}),
  };
}

/** What an SFT run carries from one part of the start sequence to the next. */
interface SftStartData {
  chats: ChatSplit;
  evals?: InlineEvaluators;
  teacher?: ResolvedModelSource;
  teacherSampler?: SamplingClient;
}

/** SFT's parts of the start sequence (runs/prepareRun.ts): chats, inline evaluators, a top-K teacher. */
const SFT_START: KindStarter<ResolvedSftSpec, SftRunResult, SftRun, SftStartData> = {
  kind: 'sft',
  starter: 'startSftRun',
  read: { file: parseSftSpecFile, config: sftSpecFromConfig, resumable: SFT_SPEC.resumable },
  learningRate: resolveLearningRate,
  async load({ spec, o, specDir, log }) {
    const chats = await loadChats(spec.dataset, { specDir, seed: spec.seed, cacheDir: o.cacheDir, ...(o.network ? { network: o.network } : {}), ...(o.signal ? { signal: o.signal } : {}) });
    logSkipped(chats.skipped, log);
    return { data: { chats }, sizes: `${chats.train.length} train chats, ${chats.validation.length} validation chats` };
  },
  async open(c, data) {
    const evals = await prepareInlineEvals(c.spec.evals, { kind: SFT_INLINE_EVALS, specDir: c.specDir, log: c.log }, c.o);
    c.hold(() => evals.close());
    return { ...data, evals };
  },
  // top-K distillation: the teacher resolved (on resume: as config.json stored it, so "latest" keeps
  // naming the run it named) and its tokenizer checked, before the run directory exists
  async connected({ spec, o, specDir, resume, log, renderer }, service, data) {
    // a chat longer than the model's context, named by its file:line before training
    const fitted = fitContext(data.chats, {
      context: await contextOf(service, spec.model, o.signal),
      policy: spec.dataset.on_invalid_line,
      tokens: (chat) => renderedChat(renderer, chat, spec.train_on_what, spec.max_length)?.modelInput.length ?? 0,
      record: 'chat',
    });
    logSkipped(fitted.skipped, log);
    if (fitted.train.length === 0) throw new DatasetError(`dataset: every training chat is too long for the model's context (first: ${fitted.skipped[0]!.where}: ${fitted.skipped[0]!.reason})`);
    data = { ...data, chats: { ...data.chats, train: fitted.train, validation: fitted.validation } };
    if (!spec.teacher) return data;
    const stored = (resume?.readConfig() as { teacher_resolved?: ResolvedModelSource } | undefined)?.teacher_resolved;
    const teacher = stored ?? (await resolveModelSource(spec.teacher, { field: 'teacher', specDir, runsDirs: [o.runsDir], service, ...(o.signal ? { signal: o.signal } : {}) }));
    await checkSameTokenizer(spec.model, teacher, 'teacher', { cacheDir: o.cacheDir, ...(o.network ? { network: o.network } : {}) });
    log(`teacher: ${teacher.label} (${teacher.model}); top-${spec.n_teacher_targets ?? 20} soft targets`);
    return { ...data, teacher, teacherSampler: await samplerOf(service, teacher, o.signal) };
  },
  config: ({ teacher }) => ({ run_kind: 'sft', ...(teacher ? { teacher_resolved: teacher } : {}) }),
  run({ spec, renderer, learningRate, log }, d, { service, writer, resumeFrom }) {
    return new SftRun({
      service,
      config: sftLoopConfig(spec, learningRate),
      renderer,
      train: d.chats.train,
      validation: d.chats.validation,
      evals: d.evals!.list,
      writer,
      resumeFrom,
      log,
      ...(d.teacherSampler ? { teacher: d.teacherSampler } : {}),
    });
  },
};

export function startSftRun(o: StartSftRunOptions): Promise<SftRunResult> {
  return startRun(SFT_START, o);
}

/** An SFT run ready to advance (its service client connected), or the answer for a finished one. */
export type PreparedSftRun = PreparedRun<SftRunResult, SftRun, ResolvedSftSpec>;

/** Everything startSftRun does before the loop (see prepareGrpoRun). */
export function prepareSftRun(o: StartSftRunOptions, resume: RunWriter | undefined, writers: RunWriter[]): Promise<PreparedSftRun> {
  return prepareRun(SFT_START, o, resume, writers);
}
