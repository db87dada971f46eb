// One entry to the rendering layer: a model name in, its renderer and tokenizer out.
import type { Dispatcher } from 'undici';
import type { NetworkOptions } from '../tinker/proxy';
import { ByteTokenizer } from './byteTokenizer';
import { ModelConfigurationError } from './errors';
import { loadHfTokenizer } from './hfTokenizer';
import { ensureTokenizerFiles } from './hub';
import { modelInfo, tokenizerSource } from './modelInfo';
import { getRenderer, isImplementedRenderer, RENDERER_NAMES, unavailableRendererMessage } from './registry';
import type { Renderer, Tokenizer } from './types';

export interface LoadRendererOptions {
  /** base model, e.g. "Qwen/Qwen3-8B" or "tinker-studio/arith-gpt" (a `:suffix` is ignored) */
  model: string;
  /** a renderer name; default: the model's recommended renderer */
  renderer?: string;
  /** where tokenizer files are cached (the extension's global storage) */
  cacheDir: string;
  /** default $HF_ENDPOINT, else https://huggingface.co */
  hubEndpoint?: string;
  /** for gated repos; never logged or stored */
  hfToken?: string;
  /** the server's tokenizer_id for the model (get_info), when it names another repo */
  tokenizerId?: string;
  /** how the hub is reached (proxy …); default: the environment */
  network?: NetworkOptions;
  dispatcher?: Dispatcher;
}

export interface LoadedRenderer {
  renderer: Renderer;
  tokenizer: Tokenizer;
  /** things the user should know, e.g. a renderer outside the model's recommended list */
  warnings: string[];
}

export async function loadRenderer(opts: LoadRendererOptions): Promise<LoadedRenderer> {
  const warnings: string[] = [];
  let rendererName = opts.renderer;
  let recommended: readonly string[] | undefined;
  try {
    recommended = modelInfo(opts.model).renderers;
  } catch (e) {
    // an unknown model is fine when the renderer is given
    if (!(e instanceof ModelConfigurationError) || rendererName === undefined) throw e;
    warnings.push(`${opts.model} is not in Tinker Studio's model list; using renderer ${rendererName} as given`);
  }
  if (rendererName === undefined) {
    rendererName = recommended![0]!;
    if (rendererName === 'tml_v0') throw new ModelConfigurationError(`${opts.model}: ${unavailableRendererMessage('tml_v0')}`);
    if (!isImplementedRenderer(rendererName)) {
      throw new ModelConfigurationError(
        `the recommended renderer of ${opts.model} is ${rendererName}, which Tinker Studio does not implement yet; choose one of ${RENDERER_NAMES.join(', ')} explicitly if it matches the model`,
      );
    }
  } else if (recommended && !recommended.includes(rendererName)) {
    warnings.push(`renderer ${rendererName} is not among the recommended renderers of ${opts.model} (${recommended.join(', ')})`);
  }
  if (!isImplementedRenderer(rendererName)) throw new ModelConfigurationError(unavailableRendererMessage(rendererName));
  const tokenizer = await loadTokenizer(opts);
  return { renderer: getRenderer(rendererName, tokenizer), tokenizer, warnings };
}

/** The model's tokenizer: the byte tokenizer for the engine's models, else the hub's files (cached). */
export async function loadTokenizer(opts: Omit<LoadRendererOptions, 'renderer'>): Promise<Tokenizer> {
  const source = tokenizerSource(opts.model, opts.tokenizerId);
  if (source.kind === 'byte') return new ByteTokenizer();
  const files = await ensureTokenizerFiles({
    repo: source.repo,
    cacheDir: opts.cacheDir,
    model: opts.model,
    ...(opts.hubEndpoint ? { endpoint: opts.hubEndpoint } : {}),
    ...(opts.hfToken ? { hfToken: opts.hfToken } : {}),
    ...(opts.network ? { network: opts.network } : {}),
    ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
  });
  return loadHfTokenizer(source.repo, files.dir);
}

export { getRenderer, rendererChoices, RENDERER_NAMES } from './registry';
export { getLr, modelInfo, recommendedRenderer, tokenizerSource } from './modelInfo';
export { RendererError, ModelConfigurationError, TokenizerFilesError } from './errors';
export type * from './types';
