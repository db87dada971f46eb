// The second models of a run — GRPO's distillation teachers and KL reference, an SFT run's top-K teacher — from their spec
// form ({model} | {checkpoint: tinker://…} | {run, checkpoint}) to a base model and a sampler, and
// the check that a teacher shares the student's tokenizer (its log-probs score the student's token
// ids, so another vocabulary would score other text), made before the run directory exists.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadTokenizer } from '../render';
import { tokenizerSource } from '../render/modelInfo';
import type { Tokenizer } from '../render/types';
import { listRuns } from '../runs/runDirectory';
import type { SamplingClient, ServiceClient } from '../tinker/client';
import type { NetworkOptions } from '../tinker/proxy';
import { textInput } from '../tinker/types';

/** What scores a sequence: a sampling client's compute_logprobs (entry 0 null, one entry per token). */
export interface SequenceScorer {
  computeLogprobs(tokens: readonly number[], signal?: AbortSignal): Promise<ReadonlyArray<number | null>>;
}
import type { ModelSourceSpec } from '../spec/datasets';

/** A second model as resolved (and kept in config.json, so a resume scores with the same one). */
export interface ResolvedModelSource {
  /** what the user named: the model, the tinker:// path, or <run>/<checkpoint> */
  label: string;
  /** its base model (the tokenizer's) */
  model: string;
  /** its tinker:// sampler path; absent: the base model itself */
  sampler_path?: string;
}

export class TeacherError extends Error {}

/** Whether a run directory's config.json makes it a distillation run (it has a teacher). */
function isDistillationRun(dir: string): boolean {
  try {
    const c = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    return c.teacher !== undefined || c.dataset_configs !== undefined;
  } catch {
    return false;
  }
}

/**
 * Resolves one model source. `field` names it in messages (e.g. "teacher"); `specDir` is the folder
 * relative run paths and "latest" start from; `runsDirs` are the other folders "latest" looks in.
 */
export async function resolveModelSource(
  src: ModelSourceSpec,
  o: { field: string; specDir: string; runsDirs: readonly string[]; service: Pick<ServiceClient, 'weightsInfo' | 'capabilities'>; signal?: AbortSignal },
): Promise<ResolvedModelSource> {
  if (src.model !== undefined) {
    // an unknown name must not be reported as another tokenizer (its name would pick one)
    const served = (await o.service.capabilities(o.signal)).supported_models.flatMap((m) => (m.model_name ? [m.model_name] : []));
    if (served.length > 0 && !served.includes(src.model))
      throw new TeacherError(`${o.field}.model: ${src.model} is not a model the backend serves; it serves ${served.join(', ')}`);
    return { label: src.model, model: src.model };
  }
  if (src.run === undefined) {
    const p = src.checkpoint!;
    const info = await o.service.weightsInfo(p, o.signal).catch((e: unknown) => {
      throw new TeacherError(`${o.field}.checkpoint: ${p} is not known to the server (${e instanceof Error ? e.message : String(e)})`);
    });
    return { label: p, model: info.base_model, sampler_path: p };
  }
  const name = src.checkpoint!;
  let runDir: string;
  if (src.run === 'latest') {
    const dirs = [...new Set([path.join(o.specDir, 'runs'), o.specDir, ...o.runsDirs])];
    const candidates = [];
    for (const d of dirs) candidates.push(...(await listRuns(d)).filter((r) => r.checkpoints.some((c) => c.name === name && c.sampler_path) && !isDistillationRun(r.dir)));
    if (candidates.length === 0) throw new TeacherError(`${o.field}.run: "latest": no run with a sampler checkpoint "${name}" in ${dirs.join(', ')} (distillation runs are not counted)`);
    candidates.sort((a, b) => b.modifiedMs - a.modifiedMs);
    runDir = candidates[0]!.dir;
  } else {
    runDir = path.resolve(o.specDir, src.run);
  }
  const run = (await listRuns(path.dirname(runDir))).find((r) => r.dir === runDir);
  if (!run) throw new TeacherError(`${o.field}.run: ${runDir} is not a run directory`);
  if (!run.model) throw new TeacherError(`${o.field}.run: ${runDir} names no model in its config.json`);
  const ck = run.checkpoints.find((c) => c.name === name && c.sampler_path);
  if (!ck) {
    const names = run.checkpoints.filter((c) => c.sampler_path).map((c) => c.name);
    throw new TeacherError(`${o.field}.checkpoint: "${name}" is not among ${runDir}'s sampler checkpoints (${names.join(', ') || 'none'})`);
  }
  return { label: `${path.basename(runDir)}/${name}`, model: run.model, sampler_path: ck.sampler_path! };
}

/** A probe of how a tokenizer cuts text: the same ids for the same text, with specials. */
const PROBE = 'The quick brown fox, 1234 + 5678 = 6912; naïve café 東京 <|im_start|>user\n<|im_end|><|endoftext|></s><s>';

function sameTokens(a: Tokenizer, b: Tokenizer): boolean {
  if (a.vocabSize !== b.vocabSize) return false;
  const ea = a.encodeWithSpecialTokens(PROBE);
  const eb = b.encodeWithSpecialTokens(PROBE);
  return ea.length === eb.length && ea.every((t, i) => t === eb[i]);
}

/**
 * Throws a TeacherError unless `teacher`'s base model tokenizes as `student`'s: the same tokenizer
 * source, or tokenizers that agree on vocabulary size and a probe text (e.g. two Qwen3 sizes).
 */
export async function checkSameTokenizer(student: string, teacher: ResolvedModelSource, field: string, o: { cacheDir: string; network?: NetworkOptions }): Promise<void> {
  const a = tokenizerSource(student);
  const b = tokenizerSource(teacher.model);
  if (a.kind === b.kind && (a.kind === 'byte' || (a.kind === 'hf' && b.kind === 'hf' && a.repo === b.repo))) return;
  const mismatch = () =>
    new TeacherError(
      `${field}: ${teacher.label} (base model ${teacher.model}) does not share the student's tokenizer (${student}): its log-probs would score other text. Distill from a teacher of the same tokenizer family, or use off-policy distillation (tinker-studio distill-data) to train on its text.`,
    );
  if (a.kind !== b.kind) throw mismatch();
  const [ta, tb] = await Promise.all([loadTokenizer({ model: student, ...o }), loadTokenizer({ model: teacher.model, ...o })]);
  if (!sameTokens(ta, tb)) throw mismatch();
}

/** A sampler as the KL code uses it: compute_logprobs over token ids. */
export function scorerOf(client: SamplingClient): SequenceScorer {
  return { computeLogprobs: (tokens, signal) => client.computeLogprobs(textInput([...tokens]), signal) };
}

/** The sampler of a resolved source. */
export function samplerOf(service: Pick<ServiceClient, 'createSamplingClient'>, src: ResolvedModelSource, signal?: AbortSignal): Promise<SamplingClient> {
  return service.createSamplingClient(src.sampler_path ? { modelPath: src.sampler_path, baseModel: src.model } : { baseModel: src.model }, signal);
}
