// An NLL eval (`"nll": {"dataset": …}`): each held-out chat is rendered by the target's renderer with
// the train-on-what rule (the SFT supervised example, cut to max_length), forwarded once under each
// target, and scored by its mean NLL per scored token: −Σ w·log p / Σ w over the positions after the
// first, the SFT datum's shift. The target's NLL is the mean over chats (the SFT validation's
// reduction: each chat counts once) with a bootstrap interval over chats; comparisons pair the chats.
// Forward only, through the sampler's prompt log-probs (compute_logprobs: one token of room, nothing
// trained), so every kind of target works (a tinker:// sampler path has no training state to load).
// Resumable per chat: targets/<id>/nll.jsonl keeps one record per chat, and a re-run forwards only the
// chats without a record of the same tokens.
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DatasetError } from '../data/problem';
import { writeFileAtomicSync } from '../fs/atomic';
import { loadRenderer } from '../render';
import { RendererError } from '../render/errors';
import type { Renderer, TrainOnWhat } from '../render/types';
import type { SamplingClient, ServiceClient } from '../tinker/client';
import { ContextWindowError } from '../tinker/errors';
import { textInput } from '../tinker/types';
import { loadChats, type Chat } from '../training/chats';
import { questionOf } from '../../protocol/promptQuestion';
import type { NllSpec } from './nllSpec';
import { runPool } from './pool';
import { EvalManifest, MANIFEST_FILE, readTargetNll, SUMMARY_FILE, targetNllFile, type EvalSummary, type NllRecord, type PairedComparison, type ProblemRow, type TargetSource, type TargetSummary } from './results';
import { bootstrapMeans, DEFAULT_BOOTSTRAP, EVAL_STATS_SEED, pairedComparison } from './stats';

/** A target as runEval resolved it (runEval's ResolvedTarget). */
export interface NllTarget {
  id: string;
  label: string;
  source: TargetSource;
  model: string;
  samplerPath?: string;
}

/** What runEval hands an NLL eval once the spec is read and the targets resolved. */
export interface NllEvalInput {
  spec: { name: string; nll: NllSpec; renderer?: string; backend: 'local' | 'cloud' | 'custom'; base_url?: string; concurrency: number } & Record<string, unknown>;
  specFile: string;
  specDir: string;
  outDir: string;
  targets: readonly NllTarget[];
  baseline: string;
  connect: (spec: { backend: 'local' | 'cloud' | 'custom'; base_url?: string }) => Promise<ServiceClient>;
  cacheDir: string;
  signal?: AbortSignal;
  onProgress?: (p: { done: number; total: number; target?: string; unit: 'chats' }) => void;
  log?: (line: string) => void;
  resamples?: number;
  createdAt?: string;
  startedMs?: number;
}

export class NllEvalError extends Error {}

/** A chat as scored: the whole token sequence and each position's weight (the renderer's rule, cut to max_length). */
export interface ScoredChat {
  tokens: number[];
  weights: number[];
  /** sha256 of (tokens, weights), 16 hex: what a record was measured on */
  fingerprint: string;
}

/** The chat as the target's renderer scores it, or undefined when no position after the first carries weight (cut before its answer). */
export function scoredChat(renderer: Renderer, chat: Chat, trainOnWhat: TrainOnWhat, maxLength?: number): ScoredChat | undefined {
  let ex;
  try {
    ex = renderer.buildSupervisedExample(chat.messages, trainOnWhat);
  } catch (err) {
    if (err instanceof RendererError) throw new DatasetError(`${chat.id}: ${err.message}`);
    throw err;
  }
  const cut = maxLength !== undefined && ex.tokens.length > maxLength;
  const tokens = cut ? ex.tokens.slice(0, maxLength) : ex.tokens;
  const weights = cut ? ex.weights.slice(0, maxLength) : ex.weights;
  // position 0 has no prediction: the datum's shift drops its weight
  if (tokens.length < 2 || !weights.slice(1).some((w) => w > 0)) return undefined;
  const fingerprint = createHash('sha256').update(JSON.stringify([tokens, weights])).digest('hex').slice(0, 16);
  return { tokens, weights, fingerprint };
}

/**
 * The chat's mean NLL per scored token from the log-probs of its tokens (entry 0 null: compute_logprobs'
 * shape), and its scored tokens (Σ w). Throws when a scored position has no finite log-prob.
 */
export function chatNll(c: Pick<ScoredChat, 'tokens' | 'weights'>, logprobs: ReadonlyArray<number | null>): { nll: number; tokens: number } {
  if (logprobs.length !== c.tokens.length) throw new NllEvalError(`the server returned ${logprobs.length} log-probs for ${c.tokens.length} tokens`);
  let num = 0;
  let den = 0;
  for (let t = 1; t < c.tokens.length; t++) {
    const w = c.weights[t]!;
    if (w === 0) continue;
    const lp = logprobs[t];
    if (typeof lp !== 'number' || !Number.isFinite(lp)) throw new NllEvalError(`the server returned no finite log-prob at scored position ${t}`);
    num -= w * lp;
    den += w;
  }
  return { nll: num / den, tokens: Math.round(den) };
}

/** Runs (or resumes) an NLL eval and writes summary.json; returns the summary. */
export async function runNllEval(o: NllEvalInput): Promise<EvalSummary> {
  const log = o.log ?? (() => undefined);
  const started = o.startedMs ?? Date.now();
  if (o.signal) setMaxListeners(0, o.signal);
  const where = path.basename(o.specFile);
  const { nll } = o.spec;
  const { max_chats, ...source } = nll.dataset;
  const loaded = await loadChats(source, { specDir: o.specDir, seed: 0, cacheDir: o.cacheDir, ...(o.signal ? { signal: o.signal } : {}) }).catch((err: unknown) => {
    throw err instanceof Error ? new NllEvalError(`${where}: nll.dataset: ${err.message}`) : err;
  });
  for (const s of loaded.skipped) log(`skipped ${s.where}: ${s.reason}`);
  const chats = max_chats !== undefined ? loaded.train.slice(0, max_chats) : loaded.train;

  // each model's renderer scores the chats its own way; a chat with nothing to score under some target's renderer is left out for all (the pairing needs the same chats)
  const renderers = new Map<string, Renderer>();
  for (const t of o.targets) {
    if (renderers.has(t.model)) continue;
    const r = await loadRenderer({ model: t.model, ...(o.spec.renderer ? { renderer: o.spec.renderer } : {}), cacheDir: o.cacheDir });
    for (const w of r.warnings) log(`warning: ${w}`);
    renderers.set(t.model, r.renderer);
  }
  const scored = new Map<string, Map<string, ScoredChat>>();
  const unscorable = new Set<string>();
  for (const [model, renderer] of renderers) {
    const m = new Map<string, ScoredChat>();
    for (const c of chats) {
      const s = scoredChat(renderer, c, nll.train_on_what, nll.max_length);
      if (s) m.set(c.id, s);
      else unscorable.add(c.id);
    }
    scored.set(model, m);
  }
  if (unscorable.size > 0) log(`${unscorable.size} chat(s) have no scored token${nll.max_length !== undefined ? ` within max_length ${nll.max_length}` : ''} and are left out; first: ${[...unscorable][0]}`);
  const kept = chats.filter((c) => !unscorable.has(c.id));
  if (kept.length === 0) throw new NllEvalError(`${where}: nll.dataset: none of the ${chats.length} chats has a token to score`);
  log(`${kept.length} chats × ${o.targets.length} target(s), NLL (forward only) → ${o.outDir}`);

  fs.mkdirSync(o.outDir, { recursive: true });
  const manifest: EvalManifest = {
    kind: 'eval',
    name: o.spec.name,
    spec_file: o.specFile,
    spec: o.spec as Record<string, unknown>,
    targets: o.targets.map(({ id, label, source, model }) => ({ id, label, source, model })),
    baseline: o.baseline,
  };
  writeFileAtomicSync(path.join(o.outDir, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');

  // what is there already: a record counts when it was measured on the same tokens
  const have = new Map<string, Map<string, NllRecord>>();
  for (const t of o.targets) {
    const file = targetNllFile(o.outDir, t.id);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const mine = scored.get(t.model)!;
    const m = new Map<string, NllRecord>();
    for (const r of readTargetNll(o.outDir, t.id)) if (mine.get(r.chat_id)?.fingerprint === r.fingerprint) m.set(r.chat_id, r);
    have.set(t.id, m);
    // a torn tail (crash mid-line) is dropped before appending
    if (fs.existsSync(file)) {
      const text = fs.readFileSync(file, 'utf8');
      if (text.length && !text.endsWith('\n')) fs.writeFileSync(file, text.slice(0, text.lastIndexOf('\n') + 1));
    }
  }
  const missing: Array<{ target: NllTarget; chat: Chat }> = [];
  for (const chat of kept) for (const t of o.targets) if (!have.get(t.id)!.has(chat.id)) missing.push({ target: t, chat });
  const total = kept.length * o.targets.length;
  let done = total - missing.length;
  if (done > 0) log(`resuming: ${done} of ${total} chat scores already in ${o.outDir}`);
  o.onProgress?.({ done, total, unit: 'chats' });

  if (missing.length > 0) {
    let service: ServiceClient | undefined;
    try {
      service = await o.connect({ backend: o.spec.backend, ...(o.spec.base_url ? { base_url: o.spec.base_url } : {}) });
      const samplers = new Map<string, Promise<SamplingClient>>();
      const samplerFor = (t: NllTarget) => {
        let s = samplers.get(t.id);
        if (!s) samplers.set(t.id, (s = service!.createSamplingClient(t.samplerPath ? { modelPath: t.samplerPath } : { baseModel: t.model }, o.signal)));
        return s;
      };
      const tasks = missing.map(({ target, chat }) => async () => {
        const sc = scored.get(target.model)!.get(chat.id)!;
        const sampler = await samplerFor(target);
        const logprobs = await sampler.computeLogprobs(textInput(sc.tokens), o.signal).catch((e: unknown) => {
          if (e instanceof ContextWindowError)
            throw new NllEvalError(`${chat.id} (${target.label}): the chat is ${sc.tokens.length} tokens and ${e.model}'s context is ${e.contextLength}; scoring needs one position more: set nll.max_length below ${e.contextLength} or shorten the chat`);
          throw e;
        });
        let r: { nll: number; tokens: number };
        try {
          r = chatNll(sc, logprobs);
        } catch (e) {
          throw new NllEvalError(`${chat.id} (${target.label}): ${e instanceof Error ? e.message : String(e)}`);
        }
        const rec: NllRecord = { chat_id: chat.id, fingerprint: sc.fingerprint, ...r };
        fs.appendFileSync(targetNllFile(o.outDir, target.id), JSON.stringify(rec) + '\n');
        have.get(target.id)!.set(chat.id, rec);
        done++;
        o.onProgress?.({ done, total, target: target.label, unit: 'chats' });
      });
      await runPool(tasks, o.spec.concurrency, o.signal);
    } finally {
      service?.close();
    }
  }

  const summary = summarizeNll({
    name: o.spec.name,
    specFile: o.specFile,
    targets: o.targets,
    baseline: o.baseline,
    chats: kept,
    have,
    resamples: o.resamples ?? DEFAULT_BOOTSTRAP,
    ...(o.createdAt ? { createdAt: o.createdAt } : {}),
    elapsedS: (Date.now() - started) / 1000,
  });
  writeFileAtomicSync(path.join(o.outDir, SUMMARY_FILE), JSON.stringify(summary, null, 2) + '\n');
  if (o.signal?.aborted) throw o.signal.reason ?? new Error('cancelled');
  return summary;
}

/** The summary of the chats' records: per target the NLL over its scored chats, comparisons on the chats both have. */
export function summarizeNll(a: {
  name: string;
  specFile: string;
  targets: readonly NllTarget[];
  baseline: string;
  chats: readonly Chat[];
  have: ReadonlyMap<string, ReadonlyMap<string, NllRecord>>;
  resamples: number;
  createdAt?: string;
  elapsedS?: number;
}): EvalSummary {
  let complete = true;
  const recordsOf = (id: string) => a.chats.flatMap((c, ci) => {
    const r = a.have.get(id)!.get(c.id);
    return r ? [{ ci, r }] : [];
  });
  const targets: TargetSummary[] = a.targets.map((t) => {
    const recs = recordsOf(t.id);
    if (recs.length < a.chats.length) complete = false;
    // one resampling of the chats for both statistics
    const [nll, tokens] = bootstrapMeans([recs.map((x) => x.r.nll), recs.map((x) => x.r.tokens)], { resamples: a.resamples, seed: EVAL_STATS_SEED });
    return {
      id: t.id,
      label: t.label,
      source: t.source,
      model: t.model,
      problems: recs.length,
      samples: recs.length,
      n: 1,
      // a target with no chat scored yet (an interrupted first run) has no figures
      metrics: recs.length ? { nll: nll!, tokens: tokens! } : {},
      reward_errors: 0,
    };
  });
  const base = a.have.get(a.baseline)!;
  const comparisons: PairedComparison[] = [];
  for (const t of a.targets) {
    if (t.id === a.baseline) continue;
    const mine = a.have.get(t.id)!;
    const common = a.chats.filter((c) => mine.has(c.id) && base.has(c.id));
    const r = pairedComparison(
      common.map((c) => mine.get(c.id)!.nll),
      common.map((c) => base.get(c.id)!.nll),
      { resamples: a.resamples, seed: EVAL_STATS_SEED },
    );
    // a lower NLL is the better one: a win is a chat where the target's NLL is below the baseline's
    comparisons.push({ target: t.id, baseline: a.baseline, ...r, wins: r.losses, losses: r.wins });
  }
  const problems: ProblemRow[] = a.chats.map((c) => {
    const lastAssistant = [...c.messages].reverse().find((m) => m.role === 'assistant');
    const firstUser = c.messages.find((m) => m.role === 'user');
    const row: ProblemRow = { problem_id: c.id, question: firstUser?.content ?? questionOf(c.messages) ?? '', ground_truth: lastAssistant?.content ?? '', targets: {} };
    for (const t of a.targets) {
      const r = a.have.get(t.id)!.get(c.id);
      if (r) row.targets[t.id] = { nll: r.nll, tokens: r.tokens };
    }
    return row;
  });
  const now = new Date().toISOString();
  return {
    kind: 'eval',
    version: 1,
    name: a.name,
    spec_file: a.specFile,
    created_at: a.createdAt ?? now,
    updated_at: now,
    complete,
    n: 1,
    grading: 'nll',
    bootstrap: { resamples: a.resamples, seed: EVAL_STATS_SEED },
    baseline: a.baseline,
    targets,
    comparisons,
    problems,
    ...(a.elapsedS !== undefined ? { elapsed_s: a.elapsedS } : {}),
  };
}
