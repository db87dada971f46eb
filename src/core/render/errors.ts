// Errors of the rendering layer, each saying what to do about it.

/** A conversation or a sampled response that a renderer cannot handle (the cookbook's RendererError). */
export class RendererError extends Error {
  override name = 'RendererError';
}

/** A model or renderer name that is not known, or not usable for what was asked (ConfigurationError / KeyError). */
export class ModelConfigurationError extends Error {
  override name = 'ModelConfigurationError';
}

/** Tokenizer files that could not be fetched from the Hugging Face hub or read from the cache. */
export class TokenizerFilesError extends Error {
  override name = 'TokenizerFilesError';
}
