// The one local checkpoint store from two entry points: the headless CLI (its own embedded engine, a
// separate process) trains a tiny run and saves a sampler checkpoint; the extension's local engine
// (another process, started by the extension) samples that tinker:// path. Both find the store
// through TINKER_STUDIO_CACHE_DIR, which the test hosts point at a temp folder (never the user's).
import * as assert from 'assert';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { textInput } from '../../../src/core/tinker/types';
import { encodeChat, RANDOM_MODEL } from '../../../src/engine/model/models';
import { engineStoreDir } from '../../../src/engine/storeDir';
import { EXTENSION_ID, useLocalEngineAndRunsFolder } from '../helpers';

const EXAMPLE_FILES = ['train.jsonl', 'reward.py'];

suite('one local checkpoint store: CLI and extension', function () {
  this.timeout(180_000);
  const { api, runsDir } = useLocalEngineAndRunsFolder('tinker-shared-store-');

  test('a sampler checkpoint the CLI saved samples through the extension\'s local engine', async () => {
    const cache = process.env.TINKER_STUDIO_CACHE_DIR;
    assert.ok(cache, 'the test host gives the extension its own cache folder');
    assert.strictEqual(engineStoreDir(), path.join(path.resolve(cache), 'engine'));
    const extensionPath = vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath;
    const dir = fs.mkdtempSync(path.join(runsDir(), 'cli-'));
    for (const f of EXAMPLE_FILES) fs.copyFileSync(path.join(extensionPath, 'examples/arithmetic', f), path.join(dir, f));
    fs.writeFileSync(
      path.join(dir, 'tiny.grpo.json'),
      JSON.stringify({ name: 'tiny', model: RANDOM_MODEL, renderer: 'chatml', lora_rank: 2, learning_rate: 0.01, groups_per_batch: 2, group_size: 2, max_tokens: 3, iterations: 1, save_every: 1, eval_every: 0, seed: 1, dataset: { path: 'train.jsonl', prompt_field: 'question', ground_truth_field: 'answer' }, reward: { file: 'reward.py', workers: 1 } }),
    );
    const child = spawn(process.execPath, [path.join(extensionPath, 'dist/cli.js'), 'grpo', 'tiny.grpo.json', '--backend', 'local', '--runs-dir', path.join(dir, 'runs')], {
      cwd: dir,
      // no --cache-dir: the CLI finds the one store the way a user's shell would
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', TINKER_STUDIO_CACHE_DIR: cache },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.strictEqual(code, 0, out);
    assert.ok(out.includes(`(data ${engineStoreDir()})`), `the CLI's engine used the one store:\n${out}`);
    const [runDir] = fs.readdirSync(path.join(dir, 'runs')).map((d) => path.join(dir, 'runs', d));
    const lines = fs.readFileSync(path.join(runDir!, 'checkpoints.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { sampler_path?: string });
    const samplerPath = lines.map((l) => l.sampler_path).find((p): p is string => typeof p === 'string');
    assert.ok(samplerPath, out);

    // the CLI's engine has stopped; the extension's own engine process serves the path
    const client = await api().connection.get();
    const sampler = await client.createSamplingClient({ modelPath: samplerPath });
    const r = await sampler.sample(textInput(encodeChat('<|im_start|>user\n1+1<|im_end|>\n')), { max_tokens: 2, temperature: 0 }, {});
    assert.strictEqual(r.sequences.length, 1);
  });
});
