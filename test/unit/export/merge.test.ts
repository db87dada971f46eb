// The export against the goldens scripts/goldens/export_fixtures.py made with torch, transformers 5
// and PEFT: our merge of each fixture equals PEFT's merge_and_unload() tensor for tensor (sha256 of the
// bytes; bf16: the same fp32 add rounded once), through slices and shards far smaller than the tensors.
import * as assert from 'assert';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { openTinkerAdapter } from '../../../src/core/export/adapter';
import { mergeIntoHfModel } from '../../../src/core/export/merge';
import { SafetensorsReader } from '../../../src/core/export/safetensors';

const root = path.resolve(__dirname, '../../../..');
export const FIXTURES = path.join(root, 'test/fixtures/export');

interface Goldens {
  families: Record<string, { bases: Record<string, { tensors: Record<string, string>; changed: number; logits_max_abs_diff?: number }> }>;
}
const goldens = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'goldens.json'), 'utf8')) as Goldens;

/** sha256 of every tensor's bytes in a model folder. */
export async function tensorHashes(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.safetensors'))) {
    const r = await SafetensorsReader.open(path.join(dir, f));
    try {
      for (const t of r.header.tensors) out[t.name] = createHash('sha256').update(await r.readBytes(t)).digest('hex');
    } finally {
      await r.close();
    }
  }
  return out;
}

describe('export: merge into a Hugging Face model (goldens from PEFT)', function () {
  this.timeout(120_000);
  let tmp: string;
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'export-merge-'))));
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  for (const [family, f] of Object.entries(goldens.families)) {
    for (const [label, golden] of Object.entries(f.bases)) {
      it(`${family}/${label}: every tensor equals PEFT's merge (slices of 1 KB, shards of 40 KB)`, async () => {
        const adapter = await openTinkerAdapter(path.join(FIXTURES, family, 'checkpoint'));
        const out = path.join(tmp, 'merged');
        try {
          const r = await mergeIntoHfModel(path.join(FIXTURES, family, label), adapter, out, { sliceBytes: 1024, maxShardBytes: 40_000, modelCard: '# card\n' });
          assert.strictEqual(r.merged, golden.changed);
        } finally {
          await adapter.reader.close();
        }
        const ours = await tensorHashes(out);
        assert.deepStrictEqual(Object.keys(ours).sort(), Object.keys(golden.tensors).sort());
        const differing = Object.keys(golden.tensors).filter((k) => ours[k] !== golden.tensors[k]);
        assert.deepStrictEqual(differing, [], `tensors differing from PEFT's merge: ${differing.join(', ')}`);
        const files = fs.readdirSync(out);
        for (const f of ['config.json', 'generation_config.json', 'README.md']) assert.ok(files.includes(f), `${f} in ${files.join(', ')}`);
        const shards = files.filter((n) => n.endsWith('.safetensors'));
        for (const s of shards) assert.ok(fs.statSync(path.join(out, s)).size <= 40_000 + 8192, `${s} past the shard limit`);
        if (shards.length > 1) {
          const index = JSON.parse(fs.readFileSync(path.join(out, 'model.safetensors.index.json'), 'utf8')) as { weight_map: Record<string, string> };
          assert.deepStrictEqual(Object.keys(index.weight_map).sort(), Object.keys(golden.tensors).sort());
        }
        assert.deepStrictEqual(
          fs.readdirSync(tmp).filter((n) => n !== 'merged'),
          [],
          'no temporary folder left',
        );
      });
    }
  }

  it('the goldens record PEFT loading our adapter with logits within 1e-5 of our merged model', () => {
    const diffs = Object.values(goldens.families).flatMap((f) => Object.values(f.bases).flatMap((b) => (b.logits_max_abs_diff === undefined ? [] : [b.logits_max_abs_diff])));
    assert.ok(diffs.length >= 4, `${diffs.length} logit comparisons`);
    for (const d of diffs) assert.ok(d <= 1e-5, `logits differ by ${d}`);
  });

  it('a cancelled merge leaves neither the output nor a temporary folder', async () => {
    const adapter = await openTinkerAdapter(path.join(FIXTURES, 'qwen3', 'checkpoint'));
    const ac = new AbortController();
    const out = path.join(tmp, 'merged');
    try {
      await assert.rejects(
        mergeIntoHfModel(path.join(FIXTURES, 'qwen3', 'base'), adapter, out, { sliceBytes: 512, signal: ac.signal, onProgress: (p) => p.done > p.total / 2 && ac.abort() }),
        (err: Error) => err.name === 'AbortError',
      );
    } finally {
      await adapter.reader.close();
    }
    assert.deepStrictEqual(fs.readdirSync(tmp), []);
  });

  it('refuses a base the adapter does not fit, naming the module and the tensor', async () => {
    const adapter = await openTinkerAdapter(path.join(FIXTURES, 'qwen3_moe', 'checkpoint'));
    try {
      await assert.rejects(mergeIntoHfModel(path.join(FIXTURES, 'qwen3', 'base'), adapter, path.join(tmp, 'm')), /adapter module "model\.layers\.0\.mlp\.experts\.w1" maps to "model\.layers\.0\.mlp\.experts\.0\.gate_proj\.weight or model\.layers\.0\.mlp\.experts\.gate_up_proj", which the base model in .* does not have/);
    } finally {
      await adapter.reader.close();
    }
    assert.deepStrictEqual(fs.readdirSync(tmp), []);
  });
});
