// The engine's models as transformers folders (src/engine/model/hfExport.ts): the files, config fields,
// tensor names and shapes, the byte tokenizer's ids, the rotary re-ordering (scores unchanged), a LoRA
// on the unembedding untying it, and the CLI. scripts/goldens/engine_export.py checks the same exports
// in transformers itself (test/fixtures/engine-export/python-check.json).
import * as assert from 'assert';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readHeader } from '../../../src/core/export/safetensors';
import { initCompute } from '../../../src/engine/compute';
import { exportEngineModel, readEngineWeights } from '../../../src/engine/model/hfExport';
import { ARITH_CHAT_MODEL, ARITH_MODEL, encodeChat } from '../../../src/engine/model/models';
import { applyRope, ROPE_BASE } from '../../../src/engine/model/rope';

const root = path.resolve(__dirname, '../../../..');
const CHECKPOINT = path.join(root, 'test/fixtures/engine-export/lora-checkpoint');
const CLI = path.join(__dirname, '../../../src/cli/main.js');

async function tensors(dir: string): Promise<Map<string, { shape: number[]; data: Float32Array }>> {
  const file = path.join(dir, 'model.safetensors');
  const h = await readHeader(file);
  const bytes = fs.readFileSync(file);
  const out = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const t of h.tensors) {
    assert.strictEqual(t.dtype, 'F32', t.name);
    const b = bytes.subarray(h.dataStart + t.begin, h.dataStart + t.end);
    out.set(t.name, { shape: t.shape, data: new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)) });
  }
  return out;
}

const readJson = (dir: string, name: string) => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as Record<string, unknown>;

describe('engine export: an engine model as a transformers folder', function () {
  this.timeout(120_000);
  let tmp: string;
  before(() => initCompute({ threads: 1, log: () => undefined }));
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-export-'))));
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('arith-gpt → GPT2LMHeadModel: config, Conv1D names and shapes, fused qkv in×out, zero biases, tied', async () => {
    const r = await exportEngineModel({ source: ARITH_MODEL, outDir: path.join(tmp, 'gpt') });
    assert.deepStrictEqual(r.files, ['config.json', 'generation_config.json', 'model.safetensors', 'special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']);
    const c = readJson(r.dir, 'config.json');
    assert.deepStrictEqual(c.architectures, ['GPT2LMHeadModel']);
    assert.deepStrictEqual(
      [c.vocab_size, c.n_positions, c.n_embd, c.n_layer, c.n_head, c.n_inner, c.activation_function, c.layer_norm_epsilon, c.tie_word_embeddings],
      [259, 64, 128, 3, 4, 512, 'gelu_new', 1e-5, true],
    );
    const t = await tensors(r.dir);
    assert.strictEqual(t.size, 2 + 3 * 12 + 2);
    assert.ok(!t.has('lm_head.weight'));
    assert.deepStrictEqual(t.get('transformer.wpe.weight')!.shape, [64, 128]);
    assert.deepStrictEqual(t.get('transformer.h.2.attn.c_attn.weight')!.shape, [128, 384]);
    assert.deepStrictEqual(t.get('transformer.h.0.mlp.c_fc.weight')!.shape, [128, 512]);
    assert.deepStrictEqual(t.get('transformer.h.0.mlp.c_proj.weight')!.shape, [512, 128]);
    assert.ok(t.get('transformer.h.1.attn.c_attn.bias')!.data.every((x) => x === 0));
    const w = readEngineWeights(ARITH_MODEL);
    // row 5 of c_attn: wq's row 5, then wk's, then wv's
    const qkv = t.get('transformer.h.1.attn.c_attn.weight')!.data.subarray(5 * 384, 6 * 384);
    assert.deepStrictEqual([...qkv.subarray(128, 256)], [...w.merged.get('h1.wk')!.subarray(5 * 128, 6 * 128)]);
    assert.deepStrictEqual([...t.get('transformer.wte.weight')!.data], [...w.merged.get('tok')!]);
  });

  it('arith-chat → GPTNeoXForCausalLM (sequential residual, full rotary): attention scores equal the engine\'s', async () => {
    const r = await exportEngineModel({ source: 'arith-chat', outDir: path.join(tmp, 'chat') });
    assert.strictEqual(r.baseModel, ARITH_CHAT_MODEL);
    const c = readJson(r.dir, 'config.json');
    assert.deepStrictEqual(c.architectures, ['GPTNeoXForCausalLM']);
    assert.deepStrictEqual([c.use_parallel_residual, c.hidden_act, c.max_position_embeddings, c.layer_norm_eps, c.tie_word_embeddings], [false, 'gelu_new', 256, 1e-5, true]);
    assert.deepStrictEqual(c.rope_parameters, { rope_type: 'default', rope_theta: ROPE_BASE, partial_rotary_factor: 1 });
    const t = await tensors(r.dir);
    assert.ok(!t.has('embed_out.weight') && t.has('gpt_neox.embed_in.weight'));
    assert.deepStrictEqual(t.get('gpt_neox.layers.0.attention.query_key_value.weight')!.shape, [384, 128]);
    assert.deepStrictEqual(t.get('gpt_neox.layers.0.mlp.dense_h_to_4h.weight')!.shape, [512, 128]);
    // one layer's q·k at positions 7 and 3: the engine's (interleaved pairs) against NeoX's (halves)
    const w = readEngineWeights(ARITH_CHAT_MODEL);
    const [d, nHead, hd] = [128, 4, 32];
    const x = (m: number) => Float32Array.from({ length: d }, (_, i) => Math.sin(0.37 * i + m));
    const project = (wt: ArrayLike<number>, v: Float32Array) => Float32Array.from({ length: d }, (_, o) => v.reduce((a, vi, i) => a + vi * wt[i * d + o]!, 0));
    const engineQ = project(w.merged.get('h2.wq')!, x(7));
    const engineK = project(w.merged.get('h2.wk')!, x(3));
    applyRope(engineQ, Int32Array.of(7), d, nHead, 256);
    applyRope(engineK, Int32Array.of(3), d, nHead, 256);
    const fused = t.get('gpt_neox.layers.2.attention.query_key_value.weight')!.data;
    const neox = (m: number, part: number) => {
      const v = x(m);
      const out = new Float32Array(d);
      for (let h = 0; h < nHead; h++) {
        const raw = Float32Array.from({ length: hd }, (_, j) => v.reduce((a, vi, i) => a + vi * fused[(h * 3 * hd + part * hd + j) * d + i]!, 0));
        for (let j = 0; j < hd / 2; j++) {
          const a = m * Math.pow(ROPE_BASE, (-2 * j) / hd);
          out[h * hd + j] = raw[j]! * Math.cos(a) - raw[j + hd / 2]! * Math.sin(a);
          out[h * hd + j + hd / 2] = raw[j + hd / 2]! * Math.cos(a) + raw[j]! * Math.sin(a);
        }
      }
      return out;
    };
    const [q, k] = [neox(7, 0), neox(3, 1)];
    for (let h = 0; h < nHead; h++) {
      let ours = 0;
      let theirs = 0;
      for (let j = 0; j < hd; j++) {
        ours += engineQ[h * hd + j]! * engineK[h * hd + j]!;
        theirs += q[h * hd + j]! * k[h * hd + j]!;
      }
      assert.ok(Math.abs(ours - theirs) <= 1e-4 * Math.max(1, Math.abs(ours)), `head ${h}: ${ours} vs ${theirs}`);
    }
  });

  it('a LoRA checkpoint on the unembedding exports untied: embed_out is tok + scale·(A·B)ᵀ', async () => {
    const r = await exportEngineModel({ source: CHECKPOINT, outDir: path.join(tmp, 'lora') });
    assert.strictEqual(r.tied, false);
    assert.strictEqual(readJson(r.dir, 'config.json').tie_word_embeddings, false);
    const t = await tensors(r.dir);
    const w = readEngineWeights(path.join(CHECKPOINT, 'adapter_model.tsstate'));
    assert.deepStrictEqual([...t.get('embed_out.weight')!.data], [...w.merged.get('unembed')!]);
    const base = readEngineWeights(ARITH_CHAT_MODEL);
    assert.notDeepStrictEqual([...w.merged.get('unembed')!], [...base.merged.get('tok')!]);
  });

  it('tokenizer.json: one id per byte (GPT-2 byte characters), the three special tokens, encodeChat\'s ids', async () => {
    const r = await exportEngineModel({ source: ARITH_CHAT_MODEL, outDir: path.join(tmp, 'tok') });
    const tj = readJson(r.dir, 'tokenizer.json') as { model: { vocab: Record<string, number>; merges: unknown[] }; added_tokens: Array<{ id: number; content: string; special: boolean }> };
    const ids = Object.values(tj.model.vocab).sort((a, b) => a - b);
    assert.deepStrictEqual(ids, Array.from({ length: 256 }, (_, i) => i));
    assert.deepStrictEqual(tj.model.merges, []);
    assert.deepStrictEqual(tj.added_tokens.map((a) => [a.id, a.content, a.special]), [[256, '<|endoftext|>', true], [257, '<|im_start|>', true], [258, '<|im_end|>', true]]);
    const byChar = new Map(Object.entries(tj.model.vocab).map(([ch, id]) => [id, ch]));
    assert.strictEqual(byChar.get(0x41), 'A');
    assert.strictEqual(byChar.get(0x20), 'Ġ');
    // byte-level encoding of text with the specials split out, as transformers does with these files
    const text = '<|im_start|>user\nWhat is 23 + 19? é<|im_end|>';
    const special = Object.fromEntries(tj.added_tokens.map((a) => [a.content, a.id]));
    const encoded = text.split(/(<\|[a-z_]+\|>)/).filter((s) => s).flatMap((s) => (s in special ? [special[s]!] : [...Buffer.from(s, 'utf8')].map((b) => tj.model.vocab[byChar.get(b)!]!)));
    assert.deepStrictEqual(encoded, encodeChat(text));
    const tc = readJson(r.dir, 'tokenizer_config.json');
    assert.strictEqual(tc.eos_token, '<|im_end|>');
    assert.match(String(tc.chat_template), /<\|im_start\|>/);
    assert.deepStrictEqual(readJson(r.dir, 'generation_config.json').eos_token_id, [258, 256]);
  });

  it('refuses clearly: an existing folder, an unknown model, a file that is not an engine checkpoint; the CLI exports', async () => {
    fs.mkdirSync(path.join(tmp, 'there'));
    await assert.rejects(exportEngineModel({ source: ARITH_MODEL, outDir: path.join(tmp, 'there') }), /already exists: choose a new folder/);
    await assert.rejects(exportEngineModel({ source: 'tinker-studio/random-gpt', outDir: path.join(tmp, 'r') }), /not a pretrained engine model/);
    fs.writeFileSync(path.join(tmp, 'bogus.state'), 'hello, not weights');
    await assert.rejects(exportEngineModel({ source: path.join(tmp, 'bogus.state'), outDir: path.join(tmp, 'b') }), /bogus\.state: not a TSSTATE1 file/);
    assert.ok(!fs.existsSync(path.join(tmp, 'b')));
    const res = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const proc = spawn(process.execPath, [CLI, 'export', 'engine', CHECKPOINT, '-o', 'out'], { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
      proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      proc.once('close', (code) => resolve({ code, stdout, stderr }));
    });
    assert.strictEqual(res.code, 0, res.stderr);
    assert.match(res.stdout, /GPTNeoXForCausalLM of tinker-studio\/arith-chat \(unembedding untied by its LoRA\)/);
    assert.ok(fs.existsSync(path.join(tmp, 'out', 'model.safetensors')));
  });
});
