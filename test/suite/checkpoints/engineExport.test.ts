// "Export Engine Model for transformers…" in the real extension host on the local engine: a short SFT
// run's sampler checkpoint row exports (downloaded from the engine, its LoRA merged by the engine's
// exporter) into the folder the window seam's picker answers; an engine model's name from the palette
// exports the base weights. The merged weights differ from the base's: the checkpoint's LoRA is in them.
import * as assert from 'assert';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { EngineExportResult } from '../../../src/engine/model/hfExport';
import type { SftRunResult } from '../../../src/core/runs/runEvents';
import type { CheckpointNode } from '../../../src/vscode/checkpoints/checkpointsTree';
import { useLocalEngineAndRunsFolder, waitFor } from '../helpers';

type PathNode = Extract<CheckpointNode, { kind: 'path' }>;
const FILES = ['config.json', 'generation_config.json', 'model.safetensors', 'special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json'];
const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

suite('Export Engine Model for transformers', function () {
  this.timeout(240_000);
  const suiteState = useLocalEngineAndRunsFolder('tinker-engine-export-');
  let dir: string;
  let runDir: string;

  suiteSetup(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-engine-export-spec-'));
    const chats = Array.from({ length: 8 }, (_, i) => JSON.stringify({ messages: [{ role: 'user', content: `What is ${i} + 3?` }, { role: 'assistant', content: String(i + 3) }] }));
    fs.writeFileSync(path.join(dir, 'chats.jsonl'), chats.join('\n') + '\n');
    const spec = { name: 'engine-export', backend: 'local', model: 'tinker-studio/arith-gpt', renderer: 'chatml', lora_rank: 4, learning_rate: 0.01, batch_size: 4, max_steps: 2, eval_every: 0, save_every: 2, dataset: { path: 'chats.jsonl' } };
    const file = path.join(dir, 'engine-export.sft.json');
    fs.writeFileSync(file, JSON.stringify(spec, null, 2));
    const r = await vscode.commands.executeCommand<SftRunResult>('tinker.startSftRun', vscode.Uri.file(file));
    assert.ok(r && r.status === 'completed', r?.error);
    runDir = r.runDir;
  });
  suiteTeardown(() => fs.rmSync(dir, { recursive: true, force: true }));

  test("a sampler checkpoint's row exports a transformers folder with its LoRA merged; a model name from the palette exports the base", async () => {
    const api = suiteState.api();
    const run = await waitFor('the run in the Checkpoints view', async () => (await api.checkpointsTree.getChildren()).find((n) => n.kind === 'run' && n.run.dir === runDir));
    const rows: PathNode[] = [];
    for (const c of await api.checkpointsTree.getChildren(run)) for (const p of await api.checkpointsTree.getChildren(c)) if (p.kind === 'path') rows.push(p);
    const sampler = rows.find((r) => r.which === 'sampler');
    assert.ok(sampler, 'a sampler checkpoint row');

    const parent = path.join(dir, 'exports');
    fs.mkdirSync(parent);
    const picked: string[] = [];
    const ui = api.ui.override({ showOpenDialog: async (o) => (picked.push(String(o.openLabel)), [vscode.Uri.file(parent)]) });
    let merged: EngineExportResult | undefined;
    try {
      merged = await vscode.commands.executeCommand<EngineExportResult>('tinker.checkpoints.exportEngineModel', sampler, [sampler]);
    } finally {
      ui.dispose();
    }
    assert.deepStrictEqual(picked, ['Export here']);
    assert.ok(merged, 'the command returns what it wrote');
    assert.strictEqual(path.dirname(merged.dir), parent);
    assert.strictEqual(merged.baseModel, 'tinker-studio/arith-gpt');
    assert.deepStrictEqual(fs.readdirSync(merged.dir).sort(), FILES);
    const config = JSON.parse(fs.readFileSync(path.join(merged.dir, 'config.json'), 'utf8'));
    assert.deepStrictEqual(config.architectures, [merged.architecture]);

    const asked: string[] = [];
    const ui2 = api.ui.override({ showInputBox: async (o) => (asked.push(String(o.title)), 'tinker-studio/arith-gpt') });
    let base: EngineExportResult | undefined;
    try {
      base = await vscode.commands.executeCommand<EngineExportResult>('tinker.checkpoints.exportEngineModel', undefined, undefined, { output: path.join(dir, 'base') });
    } finally {
      ui2.dispose();
    }
    assert.deepStrictEqual(asked, ['Engine model to export']);
    assert.ok(base);
    assert.deepStrictEqual(fs.readdirSync(base.dir).sort(), FILES);
    assert.notStrictEqual(sha(path.join(merged.dir, 'model.safetensors')), sha(path.join(base.dir, 'model.safetensors')), 'the LoRA is merged into the exported weights');
    assert.strictEqual(sha(path.join(merged.dir, 'tokenizer.json')), sha(path.join(base.dir, 'tokenizer.json')));
  });
});
