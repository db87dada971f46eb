// A supervised datum for the engine's byte model: the chat text's tokens, each predicting the next,
// every target weighted 1.
import { Datum, textInput } from '../../../src/core/tinker/types';
import { encodeChat } from '../../../src/engine/model/models';

export function sftDatum(text: string): Datum {
  const toks = encodeChat(text);
  return {
    model_input: textInput(toks.slice(0, -1)),
    loss_fn_inputs: {
      target_tokens: { dtype: 'int64', data: toks.slice(1) },
      weights: { dtype: 'float32', data: toks.slice(1).map(() => 1) },
    },
  };
}
