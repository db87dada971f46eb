// The downloadable archive of a checkpoint: a POSIX tar with the adapter's config, the engine's own
// weights file and a completion marker — the same three-part shape as a Tinker sampler archive
// (adapter_config.json, adapter weights, checkpoint_complete); the weights are in the engine's format.
import type { StateDescription } from '../contract';

function header(name: string, size: number): Uint8Array {
  const h = new Uint8Array(512);
  const put = (s: string, at: number, len: number) => {
    const b = Buffer.from(s, 'ascii');
    h.set(b.subarray(0, len), at);
  };
  put(name, 0, 100);
  put('0000644\0', 100, 8);
  put('0000000\0', 108, 8);
  put('0000000\0', 116, 8);
  put(`${size.toString(8).padStart(11, '0')}\0`, 124, 12);
  put(`${Math.floor(Date.now() / 1000).toString(8).padStart(11, '0')}\0`, 136, 12);
  put('        ', 148, 8); // checksum placeholder: spaces while summing
  put('0', 156, 1);
  put('ustar\0', 257, 6);
  put('00', 263, 2);
  let sum = 0;
  for (const b of h) sum += b;
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  return h;
}

export function buildArchive(weights: Uint8Array, desc: StateDescription, tinkerPath: string): Uint8Array {
  const files: Array<[string, Uint8Array]> = [
    [
      'adapter_config.json',
      Buffer.from(
        JSON.stringify(
          {
            base_model_name_or_path: desc.baseModel,
            peft_type: 'LORA',
            r: desc.lora.rank,
            train_attn: desc.lora.trainAttn,
            train_mlp: desc.lora.trainMlp,
            train_unembed: desc.lora.trainUnembed,
            tinker_path: tinkerPath,
            format: 'tinker-studio-engine-state',
          },
          null,
          2,
        ),
      ),
    ],
    ['adapter_model.tsstate', weights],
    ['checkpoint_complete', new Uint8Array(0)],
  ];
  const parts: Uint8Array[] = [];
  for (const [name, data] of files) {
    parts.push(header(name, data.length), data);
    const pad = (512 - (data.length % 512)) % 512;
    if (pad) parts.push(new Uint8Array(pad));
  }
  parts.push(new Uint8Array(1024));
  return Buffer.concat(parts);
}
