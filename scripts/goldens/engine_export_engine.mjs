#!/usr/bin/env node
// The engine side of the engine-export check (scripts/goldens/engine_export.py is the transformers side):
// trains a small seeded LoRA on arith-chat (attention, MLP and unembedding, so the export unties the
// unembedding), exports arith-gpt, arith-chat and that checkpoint with src/engine/model/hfExport.ts, and
// records the engine's greedy answers and log-probabilities for 20 prompts as goldens.
//
//   npm run build && npx tsc -p . && node scripts/goldens/engine_export_engine.mjs --exports /tmp/engine-exports
//   → test/fixtures/engine-export/{goldens.json, lora-checkpoint/adapter_model.tsstate}
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);
const out = (p) => require(path.join(root, 'out/src', p));
const { LocalBackend } = out('engine/model/backend.js');
const { ARITH_MODEL, ARITH_CHAT_MODEL, encodeChat, decodeBytes, BYTE_TOKENIZER } = out('engine/model/models.js');
const { Rng } = out('engine/model/gptWeights.js');
const { Gpt } = out('engine/model/gpt.js');
const { initCompute } = out('engine/compute/index.js');
const { exportEngineModel, readEngineWeights } = out('engine/model/hfExport.js');

const argv = process.argv.slice(2);
const exportsDir = argv[argv.indexOf('--exports') + 1];
if (!argv.includes('--exports') || !exportsDir) throw new Error('--exports DIR is required (a folder for the exported models)');
const fixtures = path.join(root, 'test/fixtures/engine-export');
await initCompute({ threads: 1, log: () => undefined });

const IM_END = BYTE_TOKENIZER.specialTokens['<|im_end|>'];
const chat = (q) => `<|im_start|>user\n${q}<|im_end|>\n<|im_start|>assistant\n`;
const rng = new Rng(52);
const int = (n) => Math.floor(rng.next() * n);
const questions = ['What is 23 + 19?'];
while (questions.length < 20) questions.push(`What is ${int(50)} + ${int(50)}?`);

// A LoRA trained briefly on "Add x and y." questions: seeded data, fixed steps, one thread.
const backend = new LocalBackend();
await backend.createTrainingModel('lora', ARITH_CHAT_MODEL, { rank: 2, seed: 5, trainAttn: true, trainMlp: true, trainUnembed: true });
for (let step = 0; step < 12; step++) {
  const data = [];
  for (let i = 0; i < 16; i++) {
    const [x, y] = [int(50), int(50)];
    const prompt = encodeChat(chat(`Add ${x} and ${y}.`));
    const full = [...prompt, ...encodeChat(String(x + y)), IM_END];
    const weights = full.map((_, j) => (j >= prompt.length ? 1 : 0));
    data.push({
      tokens: Int32Array.from(full.slice(0, -1)),
      lossFnInputs: {
        target_tokens: { dtype: 'int64', data: Float64Array.from(full.slice(1)), shape: [full.length - 1] },
        weights: { dtype: 'float32', data: Float32Array.from(weights.slice(1)), shape: [full.length - 1] },
      },
    });
  }
  await backend.forwardBackward('lora', data, 'cross_entropy', {}, false);
  await backend.optimStep('lora', { learningRate: 5e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 });
}
const state = await backend.exportState('lora', false);
fs.mkdirSync(path.join(fixtures, 'lora-checkpoint'), { recursive: true });
const stateFile = path.join(fixtures, 'lora-checkpoint/adapter_model.tsstate');
fs.writeFileSync(stateFile, state);

const b64 = (a) => Buffer.from(Float32Array.from(a).buffer).toString('base64');
const models = [
  { name: 'arith-gpt', source: ARITH_MODEL, sampler: { baseModel: ARITH_MODEL } },
  { name: 'arith-chat', source: ARITH_CHAT_MODEL, sampler: { baseModel: ARITH_CHAT_MODEL } },
  { name: 'arith-chat-lora', source: stateFile, sampler: { state } },
];
fs.rmSync(exportsDir, { recursive: true, force: true });
const goldens = { note: 'engine log-probabilities (float32, base64 little-endian) and greedy answers; scripts/goldens/engine_export_engine.mjs', models: {} };
for (const m of models) {
  const r = await exportEngineModel({ source: m.source, outDir: path.join(exportsDir, m.name) });
  await backend.createSampler(m.name, m.sampler);
  const w = readEngineWeights(m.source);
  // the trainer's forward: base weights and adapters apart (the sampler greedy-decodes with them merged)
  const gpt = new Gpt(w.config, w.base, w.lora?.params, w.lora?.spec, (n) => new Float32Array(n));
  const prompts = [];
  for (const q of questions) {
    const prompt = encodeChat(chat(q));
    const s = await backend.sample(m.name, {
      prompt: Int32Array.from(prompt),
      numSamples: 1,
      params: { maxTokens: 8, temperature: 0, topP: 1, topK: -1, stopStrings: [], stopTokens: [IM_END], seed: 1 },
      promptLogprobs: false,
      topkPromptLogprobs: 0,
    });
    const answer = [...s.sequences[0].tokens];
    const tokens = [...prompt, ...answer];
    const V = w.config.vocabSize;
    const lp = gpt.forward(Int32Array.from(tokens), [tokens.length]).logprobs;
    const next = tokens.slice(1).map((t, i) => lp[i * V + t]);
    const last = lp.slice((prompt.length - 1) * V, prompt.length * V);
    prompts.push({ question: q, prompt, answer, answer_text: decodeBytes(answer.filter((t) => t !== IM_END)), next_token_logprobs: b64(next), last_prompt_row_logprobs: b64(last) });
  }
  goldens.models[m.name] = { architecture: r.architecture, tied: r.tied, prompts };
  console.log(`${m.name}: ${r.architecture}${r.tied ? '' : ' (untied)'}; "${questions[0]}" → ${prompts[0].answer_text}`);
}
fs.writeFileSync(path.join(fixtures, 'goldens.json'), `${JSON.stringify(goldens, null, 1)}\n`);
await backend.close();
