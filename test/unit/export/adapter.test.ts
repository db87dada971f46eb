// A Tinker checkpoint as a PEFT adapter (names, per-expert split, adapter_config.json as PEFT reads it),
// the refusals by name, the streamed safetensors codec, the model card, and the CLI on a fixture.
import * as assert from 'assert';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseExportArgs } from '../../../src/cli/exportArgs';
import { openTinkerAdapter, toPeftAdapter } from '../../../src/core/export/adapter';
import { exportCheckpoint } from '../../../src/core/export/exportCheckpoint';
import { mergeIntoHfModel } from '../../../src/core/export/merge';
import { modelCard } from '../../../src/core/export/modelCard';
import { SafetensorsReader, fromFloat32, readHeader, toFloat32, writeSafetensors } from '../../../src/core/export/safetensors';
import { FIXTURES, tensorHashes } from './merge.test';

const CLI = path.join(__dirname, '../../../src/cli/main.js');

function copyDir(from: string, to: string): void {
  fs.cpSync(from, to, { recursive: true });
}

describe('export: PEFT adapter, refusals, safetensors, model card, CLI', function () {
  this.timeout(120_000);
  let tmp: string;
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'export-adapter-'))));
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('splits 3-D experts per expert under PEFT names, a shared side repeated, and writes the config PEFT reads', async () => {
    const adapter = await openTinkerAdapter(path.join(FIXTURES, 'qwen3_moe', 'checkpoint'));
    try {
      const r = await toPeftAdapter(adapter, path.join(tmp, 'a'));
      assert.deepStrictEqual(r.targetModules, ['down_proj', 'gate_proj', 'k_proj', 'lm_head', 'o_proj', 'q_proj', 'up_proj', 'v_proj']);
      const out = await SafetensorsReader.open(path.join(tmp, 'a', 'adapter_model.safetensors'));
      try {
        const names = out.header.tensors.map((t) => t.name);
        assert.ok(names.includes('base_model.model.lm_head.lora_B.weight'));
        assert.ok(!names.some((n) => n.includes('unembed') || n.includes('.w1.')));
        assert.deepStrictEqual(out.info('base_model.model.model.layers.1.mlp.experts.3.gate_proj.lora_A.weight').shape, [4, 32]);
        assert.deepStrictEqual(out.info('base_model.model.model.layers.1.mlp.experts.3.gate_proj.lora_B.weight').shape, [24, 4]);
        // w1's lora_A is shared (1, r, H): every expert gets the same A; lora_B is per expert
        const a0 = await out.readFloat32('base_model.model.model.layers.0.mlp.experts.0.gate_proj.lora_A.weight');
        const a3 = await out.readFloat32('base_model.model.model.layers.0.mlp.experts.3.gate_proj.lora_A.weight');
        assert.deepStrictEqual(a3, a0);
        const b = await adapter.reader.readFloat32('base_model.model.model.layers.0.mlp.experts.w1.lora_B.weight');
        assert.deepStrictEqual(await out.readFloat32('base_model.model.model.layers.0.mlp.experts.2.gate_proj.lora_B.weight'), b.slice(2 * 24 * 4, 3 * 24 * 4));
      } finally {
        await out.close();
      }
      const config = JSON.parse(fs.readFileSync(path.join(tmp, 'a', 'adapter_config.json'), 'utf8'));
      assert.strictEqual(config.peft_type, 'LORA');
      assert.strictEqual(config.task_type, 'CAUSAL_LM');
      assert.strictEqual(config.r, 4);
      assert.strictEqual(config.lora_alpha, 8);
      assert.strictEqual(config.base_model_name_or_path, 'Qwen/Qwen3-30B-A3B');
    } finally {
      await adapter.reader.close();
    }
  });

  it('refuses DeepSeek V3 adapters, FP8 and INT4 bases, engine checkpoints and unfinished ones, by name', async () => {
    const ckpt = path.join(tmp, 'ckpt');
    copyDir(path.join(FIXTURES, 'qwen3', 'checkpoint'), ckpt);
    await assert.rejects(exportCheckpoint({ kind: 'adapter', checkpointDir: ckpt, outDir: path.join(tmp, 'x'), baseModel: 'deepseek-ai/DeepSeek-V3.1' }), /DeepSeek V3 models have no LoRA adapter form/);
    await assert.rejects(exportCheckpoint({ kind: 'adapter', checkpointDir: ckpt, outDir: path.join(tmp, 'x'), baseModel: 'tinker-studio/arith-gpt' }), /embedded engine/);
    for (const [quant, words] of [
      [{ quant_method: 'fp8', fmt: 'e4m3' }, /DeepSeek's native FP8/],
      [{ quant_method: 'compressed-tensors', format: 'pack-quantized' }, /Kimi's INT4 pack-quantized/],
    ] as const) {
      const base = path.join(tmp, `base-${quant.quant_method}`);
      copyDir(path.join(FIXTURES, 'qwen3', 'base'), base);
      const config = JSON.parse(fs.readFileSync(path.join(base, 'config.json'), 'utf8'));
      fs.writeFileSync(path.join(base, 'config.json'), JSON.stringify({ ...config, quantization_config: quant }));
      await assert.rejects(exportCheckpoint({ kind: 'merge', checkpointDir: ckpt, baseDir: base, outDir: path.join(tmp, 'y') }), words);
    }
    fs.rmSync(path.join(ckpt, 'checkpoint_complete'));
    await assert.rejects(openTinkerAdapter(ckpt), /no checkpoint_complete marker/);
    assert.ok(!fs.existsSync(path.join(tmp, 'x')) && !fs.existsSync(path.join(tmp, 'y')));
  });

  it('names the file and tensor of a truncated safetensors file', async () => {
    const file = path.join(tmp, 'w.safetensors');
    await writeSafetensors(file, [{ name: 'w', dtype: 'F32', shape: [4, 4], data: Buffer.alloc(64) }]);
    fs.truncateSync(file, fs.statSync(file).size - 4);
    await assert.rejects(readHeader(file), (err: Error) => err.message.includes(file) && err.message.includes('tensor "w"') && /truncated/.test(err.message));
  });

  it('rounds to BF16 and F16 to nearest even, as torch does', () => {
    // 1 + 2^-8 lies halfway between two bf16 values: ties to the even one (1.0); a bit more rounds up
    const x = new Float32Array([1 + 2 ** -8, 1 + 2 ** -8 + 2 ** -20, -3.140625, 65520, 2 ** -25 * 3]);
    assert.deepStrictEqual([...toFloat32(fromFloat32(x, 'BF16'), 'BF16')], [1, 1 + 2 ** -7, -3.140625, 65536, 2 ** -25 * 3]);
    // F16: 65520 overflows to infinity; 3·2^-25 is 1.5 of the smallest subnormal: ties to even (2·2^-24)
    assert.deepStrictEqual([...toFloat32(fromFloat32(x.slice(2), 'F16'), 'F16')], [-3.140625, Infinity, 2 ** -23]);
  });

  it('writes a model card with the hub front matter', () => {
    const card = modelCard({ kind: 'adapter', baseModel: 'Qwen/Qwen3-8B', r: 4, alpha: 8, tinkerPath: 'tinker://run-1/sampler_weights/final' });
    const front = card.split('---\n')[1]!;
    assert.ok(front.includes('base_model: Qwen/Qwen3-8B\nlibrary_name: peft\npipeline_tag: text-generation\ntags:\n- tinker\n- peft\n- lora\n- base_model:adapter:Qwen/Qwen3-8B\ntinker_path: tinker://run-1/sampler_weights/final\n'), front);
    assert.match(card, /## How to use\n\n```python\n[^]*PeftModel\.from_pretrained/);
    assert.match(modelCard({ kind: 'merged', baseModel: 'Qwen/Qwen3-8B', r: 4, alpha: 8 }), /library_name: transformers/);
  });

  it('CLI: tinker-studio export merge and adapter on a fixture checkpoint', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const proc = spawn(process.execPath, [CLI, 'export', ...args], { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
        proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
        proc.once('close', (code) => resolve({ code, stdout, stderr }));
      });
    const ckpt = path.join(FIXTURES, 'llama_tied', 'checkpoint');
    const merged = await run(['merge', ckpt, '--base', path.join(FIXTURES, 'llama_tied', 'base'), '--output', 'merged']);
    assert.strictEqual(merged.code, 0, merged.stderr);
    assert.match(merged.stdout, /merged model of meta-llama\/Llama-3\.2-1B/);
    const golden = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'goldens.json'), 'utf8')).families.llama_tied.bases.base.tensors;
    assert.deepStrictEqual(await tensorHashes(path.join(tmp, 'merged')), golden);
    const again = await run(['merge', ckpt, '--base', path.join(FIXTURES, 'llama_tied', 'base'), '--output', 'merged']);
    assert.strictEqual(again.code, 1);
    assert.match(again.stderr, /already exists; choose a new folder/);
    const adapter = await run(['adapter', ckpt, '--output', 'adapter']);
    assert.strictEqual(adapter.code, 0, adapter.stderr);
    assert.deepStrictEqual(fs.readdirSync(path.join(tmp, 'adapter')).sort(), ['README.md', 'adapter_config.json', 'adapter_model.safetensors']);
    assert.throws(() => parseExportArgs(['merge', ckpt, '--output', 'x']), /needs --base DIR/);
  });

  it('keeps its memory to slices: a merge with slices of 4 KB reads no tensor whole', async () => {
    const adapter = await openTinkerAdapter(path.join(FIXTURES, 'qwen3', 'checkpoint'));
    const reads: number[] = [];
    const original = SafetensorsReader.prototype.readBytes;
    SafetensorsReader.prototype.readBytes = function (this: SafetensorsReader, t, from, to) {
      if (!this.header.file.includes('checkpoint')) reads.push((to ?? t.end - t.begin) - (from ?? 0));
      return original.call(this, t, from, to);
    };
    try {
      await mergeIntoHfModel(path.join(FIXTURES, 'qwen3', 'base'), adapter, path.join(tmp, 'm'), { sliceBytes: 4096 });
    } finally {
      SafetensorsReader.prototype.readBytes = original;
      await adapter.reader.close();
    }
    // the largest base tensor (embed_tokens, 96 × 32 fp32) is 12 KB: it is read in slices of ≤ 4 KB
    assert.ok(reads.length > 0 && Math.max(...reads) <= 4096, `largest read ${Math.max(...reads)}`);
  });
});
