// One playground run: the same prompt and parameters on side A and, optionally, side B, sampled
// concurrently. Each of a side's N samples is its own request, so each result is yielded when its
// request completes; with a reward runner and a ground truth it is scored first (the runner
// training uses). Aborting the signal stops every poll and submits nothing more; the run's summary
// settles only once no request of it is in flight.
import type { LoadedRenderer } from '../render';
import { ModelConfigurationError, RendererError } from '../render/errors';
import type { Message, Renderer } from '../render/types';
import type { RewardRunner } from '../reward/types';
import { stopParam } from '../rollouts/rollout';
import type { SamplingClient, ServiceClient } from '../tinker/client';
import { NotFoundError, TinkerApiError } from '../tinker/errors';
import { textInput } from '../tinker/types';
import { forEachBounded } from '../checkpoints/bulk';
import { EventQueue } from './queue';
import type { PlaygroundEvent, PlaygroundRequest, PlaygroundSample, PlaygroundSummary, SideId, SideInfo, SideSource, SideSummary } from './types';
import { errorMessage } from '../errors';

export class PlaygroundError extends Error {
  override name = 'PlaygroundError';
}

export interface PlaygroundDeps {
  service: ServiceClient;
  /** the model's renderer (and tokenizer); rejects with ModelConfigurationError when there is none */
  rendererFor(model: string): Promise<LoadedRenderer>;
  /** scores samples when the prompt has a ground truth */
  reward?: RewardRunner;
  /** requests of one side in flight at once (default 8): a cancel abandons at most these */
  maxInFlight?: number;
}

export interface PlaygroundRun extends AsyncIterable<PlaygroundEvent> {
  /** settles when every request of the run has finished or been abandoned */
  readonly summary: Promise<PlaygroundSummary>;
}

/** The base model a side samples: the model itself, or the one the checkpoint was trained from. */
export async function resolveBaseModel(deps: Pick<PlaygroundDeps, 'service'>, side: SideId, source: SideSource, signal?: AbortSignal): Promise<string> {
  if (source.kind === 'checkpoint') {
    if (!source.path.startsWith('tinker://')) throw new PlaygroundError(`side ${side}: a sampler checkpoint path starts with tinker:// (got "${source.path}")`);
    try {
      return (await deps.service.weightsInfo(source.path, signal)).base_model;
    } catch (err) {
      throw checkpointError(side, source.path, err);
    }
  }
  const caps = await deps.service.capabilities(signal);
  const served = caps.supported_models.flatMap((m) => (m.model_name ? [m.model_name] : []));
  if (!served.includes(source.model)) {
    throw new PlaygroundError(`side ${side}: the server does not serve ${source.model}; it serves ${served.length ? served.join(', ') : 'no models'}`);
  }
  return source.model;
}

/** The renderer of a side's base model, or an error naming the model. */
export async function sideRenderer(deps: Pick<PlaygroundDeps, 'rendererFor'>, side: SideId, baseModel: string): Promise<Renderer> {
  try {
    return (await deps.rendererFor(baseModel)).renderer;
  } catch (err) {
    if (err instanceof ModelConfigurationError) throw new PlaygroundError(`side ${side}: no renderer for ${baseModel}: ${err.message}`);
    throw err;
  }
}

/** The sampler, renderer and prompt of one side; errors say what to do. */
export async function prepareSide(deps: PlaygroundDeps, side: SideId, source: SideSource, messages: readonly Message[], stop: string[] | undefined, signal?: AbortSignal) {
  const baseModel = await resolveBaseModel(deps, side, source, signal);
  const renderer = await sideRenderer(deps, side, baseModel);
  let promptTokens: number[];
  try {
    promptTokens = renderer.buildGenerationPrompt(messages);
  } catch (err) {
    if (err instanceof RendererError) throw new PlaygroundError(`side ${side}: the ${renderer.name} renderer cannot render this conversation: ${err.message}`);
    throw err;
  }
  let sampler: SamplingClient;
  try {
    sampler = await deps.service.createSamplingClient(source.kind === 'base' ? { baseModel } : { modelPath: source.path }, signal);
  } catch (err) {
    throw source.kind === 'checkpoint' ? checkpointError(side, source.path, err) : err;
  }
  const info: SideInfo = { side, source, baseModel, renderer: renderer.name, promptTokens: promptTokens.length, stop: stop ?? stopParam(renderer.stopSequences()) };
  return { info, renderer, sampler, promptTokens };
}

function checkpointError(side: SideId, path: string, err: unknown): unknown {
  if (err instanceof NotFoundError || (err instanceof TinkerApiError && err.status === 404)) {
    return new PlaygroundError(`side ${side}: checkpoint ${path} no longer exists on this server (deleted, expired, or saved on another server)`);
  }
  return err;
}

/** The rendered prompt as the model sees it: special tokens written out, and its length. */
export function renderedPrompt(renderer: Renderer, messages: readonly Message[]): { renderer: string; tokens: number; text: string } {
  const ids = renderer.buildGenerationPrompt(messages);
  return { renderer: renderer.name, tokens: ids.length, text: renderer.tokenizer.decode(ids) };
}

export function startPlayground(req: PlaygroundRequest, deps: PlaygroundDeps, signal?: AbortSignal): PlaygroundRun {
  const queue = new EventQueue<PlaygroundEvent>();
  const sides = (['A', 'B'] as const).flatMap((id) => {
    const source = req.sides[id];
    return source ? [{ id, source }] : [];
  });
  const summary = Promise.all(sides.map(async ({ id, source }) => [id, await runSide(req, deps, id, source, (e) => queue.push(e), signal)] as const))
    .then((done): PlaygroundSummary => ({ sides: Object.fromEntries(done), cancelled: signal?.aborted ?? false }))
    .finally(() => queue.close());
  return { summary, [Symbol.asyncIterator]: () => queue.iterate() };
}

async function runSide(req: PlaygroundRequest, deps: PlaygroundDeps, side: SideId, source: SideSource, emit: (e: PlaygroundEvent) => void, signal?: AbortSignal): Promise<SideSummary> {
  const rewards: number[] = [];
  let samples = 0;
  let error: string | undefined;
  const fail = (err: unknown) => {
    if (signal?.aborted) return;
    const message = errorMessage(err);
    error ??= message;
    emit({ type: 'sideError', side, message });
  };
  try {
    const prepared = await prepareSide(deps, side, source, req.prompt.messages, req.params.stop, signal);
    emit({ type: 'side', info: prepared.info });
    const p = req.params;
    // a prompt that fills the model's context fails once for the side, not once per sample
    await prepared.sampler.fitToContext(textInput(prepared.promptTokens), { max_tokens: p.maxTokens }, signal);
    const groundTruth = req.prompt.groundTruth;
    await forEachBounded(
      Array.from({ length: p.n }, (_, index) => index),
      deps.maxInFlight ?? 8,
      async (index) => {
        try {
          signal?.throwIfAborted();
          const t0 = performance.now();
          const r = await prepared.sampler.sample(
            textInput(prepared.promptTokens),
            { max_tokens: p.maxTokens, temperature: p.temperature, top_p: p.topP, top_k: p.topK, stop: prepared.info.stop, ...(p.seed !== undefined ? { seed: p.seed + index } : {}) },
            { numSamples: 1, signal },
          );
          const seq = r.sequences[0];
          if (!seq) throw new PlaygroundError(`side ${side}: the server returned no sequence for sample ${index}`);
          const ms = performance.now() - t0;
          const parsed = prepared.renderer.parseResponse(seq.tokens);
          const sample: PlaygroundSample = {
            side,
            index,
            // a turn with tool calls shows as the model wrote it (calls included), not its content alone
            text: parsed.message.tool_calls?.length || parsed.message.unparsed_tool_calls?.length ? writtenText(prepared.renderer, seq.tokens) : parsed.message.content,
            tokens: seq.tokens,
            logprobs: seq.logprobs ?? [],
            stopReason: seq.stop_reason,
            termination: parsed.termination,
            message: parsed.message,
            ms,
          };
          if (deps.reward && groundTruth !== undefined) {
            const [o] = await deps.reward.score([{ completion: sample.text, groundTruth }], signal);
            if (o) {
              sample.reward = o.reward;
              if (!o.ok) sample.rewardError = o.error;
              rewards.push(o.reward);
            }
          }
          if (signal?.aborted) return;
          samples++;
          emit({ type: 'sample', sample });
        } catch (err) {
          fail(err);
        }
      },
    );
  } catch (err) {
    fail(err);
  }
  return { samples, ...(rewards.length ? { meanReward: rewards.reduce((a, b) => a + b, 0) / rewards.length } : {}), ...(error ? { error } : {}) };
}

/** The text of a sampled turn as the model wrote it, without the stop token it ended on. */
function writtenText(renderer: Renderer, tokens: readonly number[]): string {
  const stop = renderer.stopSequences();
  const last = tokens[tokens.length - 1];
  const cut = stop.kind === 'tokens' && last !== undefined && stop.tokens.includes(last) ? tokens.slice(0, -1) : tokens;
  return renderer.tokenizer.decode(cut);
}
