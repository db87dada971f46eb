// "Export as PEFT Adapter…" and "Merge into Hugging Face Model…" from the palette, in the real extension
// host: the window seam answers the prompts (the tinker:// path, the folder picker); the extension's
// connection is a custom server in front of a real embedded engine, the front standing in for the
// service's archive URL route (302 to its storage) with a fixture Qwen3 checkpoint's tar, as the
// engine's own checkpoints are in its format, not a Hugging Face family's. The written folders are
// checked against the committed goldens (test/fixtures/export/goldens.json, made by PEFT).
import * as assert from 'assert';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { SafetensorsReader } from '../../../src/core/export/safetensors';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { startEngine } from '../../unit/tinker/engineFixtures';
import { activateExtension } from '../helpers';

const FIXTURES = path.resolve(__dirname, '../../../../test/fixtures/export');
const TINKER_PATH = 'tinker://run-export/sampler_weights/final';

/** A ustar archive of a folder's files. */
function tarOf(dir: string): Buffer {
  const parts: Buffer[] = [];
  for (const name of fs.readdirSync(dir)) {
    const data = fs.readFileSync(path.join(dir, name));
    const h = Buffer.alloc(512);
    h.write(name, 0, 'ascii');
    h.write('0000644\0', 100, 'ascii');
    h.write('0000000\0', 108, 'ascii');
    h.write('0000000\0', 116, 'ascii');
    h.write(`${data.length.toString(8).padStart(11, '0')}\0`, 124, 'ascii');
    h.write(`${'0'.repeat(11)}\0`, 136, 'ascii');
    h.write('        ', 148, 'ascii');
    h.write('0', 156, 'ascii');
    h.write('ustar\0', 257, 'ascii');
    h.write('00', 263, 'ascii');
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
    parts.push(h, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

async function tensors(dir: string): Promise<Record<string, string>> {
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

suite('Export a checkpoint as a PEFT adapter or a merged Hugging Face model', function () {
  this.timeout(180_000);
  let api: TinkerStudioTestHandles;
  let dir: string;
  let engine: Awaited<ReturnType<typeof startEngine>>;
  let front: http.Server;
  const archiveAsks: string[] = [];
  const goldens = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'goldens.json'), 'utf8')) as { rank: number; alpha: number; families: { qwen3: { hub_name: string; bases: { base: { tensors: Record<string, string> } } } } };

  suiteSetup(async () => {
    api = await activateExtension();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-host-export-'));
    engine = await startEngine(path.join(dir, 'engine'));
    const enginePort = Number(new URL(engine.server.url).port);
    const archive = tarOf(path.join(FIXTURES, 'qwen3', 'checkpoint'));
    // stand-in of the service's archive URL route and its storage; every other request goes to the engine
    front = http.createServer((req, res) => {
      if (/\/archive$/.test(req.url ?? '')) {
        archiveAsks.push(req.url ?? '');
        return void res.writeHead(302, { location: `http://127.0.0.1:${(front.address() as AddressInfo).port}/storage/ckpt.tar`, expires: new Date(Date.now() + 600_000).toUTCString() }).end();
      }
      if (req.url === '/storage/ckpt.tar') return void res.writeHead(200, { 'content-length': archive.length }).end(archive);
      const up = http.request({ host: '127.0.0.1', port: enginePort, path: req.url, method: req.method, headers: { ...req.headers, host: `127.0.0.1:${enginePort}` } }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.writeHead(502).end());
      req.pipe(up);
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
    const c = vscode.workspace.getConfiguration('tinker');
    await c.update('customBaseUrl', `http://127.0.0.1:${(front.address() as AddressInfo).port}`, vscode.ConfigurationTarget.Global);
    await c.update('backend', 'custom', vscode.ConfigurationTarget.Global);
  });
  suiteTeardown(async () => {
    const c = vscode.workspace.getConfiguration('tinker');
    await c.update('backend', undefined, vscode.ConfigurationTarget.Global);
    await c.update('customBaseUrl', undefined, vscode.ConfigurationTarget.Global);
    front?.closeAllConnections();
    await new Promise<void>((r) => (front ? front.close(() => r()) : r()));
    await engine?.server.close();
    await engine?.backend.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('Export as PEFT Adapter…: asks for the path and the folder, writes adapter_config.json, the PEFT weights and the card', async () => {
    const parent = path.join(dir, 'exports');
    fs.mkdirSync(parent);
    const asked: string[] = [];
    const answers = api.ui.override({
      showInputBox: async (o) => (asked.push(`input: ${o.title}`), TINKER_PATH),
      showOpenDialog: async (o) => (asked.push(`folder: ${o.openLabel}`), [vscode.Uri.file(parent)]),
    });
    let result: { dir: string; files: string[] } | undefined;
    try {
      result = await vscode.commands.executeCommand<{ dir: string; files: string[] }>('tinker.checkpoints.exportAdapter');
    } finally {
      answers.dispose();
    }
    assert.deepStrictEqual(asked, ['input: Checkpoint to export', 'folder: Export here']);
    assert.ok(result, 'the command returns what it wrote');
    assert.strictEqual(path.dirname(result.dir), parent);
    assert.ok(archiveAsks.length >= 1, 'the archive came through the archive route');
    assert.deepStrictEqual(fs.readdirSync(result.dir).sort(), ['README.md', 'adapter_config.json', 'adapter_model.safetensors']);
    const config = JSON.parse(fs.readFileSync(path.join(result.dir, 'adapter_config.json'), 'utf8'));
    assert.deepStrictEqual([config.peft_type, config.task_type, config.r, config.lora_alpha, config.base_model_name_or_path], ['LORA', 'CAUSAL_LM', goldens.rank, goldens.alpha, goldens.families.qwen3.hub_name]);
    // the checkpoint's tensors, unchanged, under PEFT's names (the unembedding is lm_head)
    const inCheckpoint = await tensors(path.join(FIXTURES, 'qwen3', 'checkpoint'));
    const expected = Object.fromEntries(Object.entries(inCheckpoint).map(([n, h]) => [n.replace('base_model.model.model.unembed_tokens.', 'base_model.model.lm_head.'), h]));
    assert.deepStrictEqual(await tensors(result.dir), expected);
    const card = fs.readFileSync(path.join(result.dir, 'README.md'), 'utf8');
    assert.match(card, /library_name: peft/);
    assert.match(card, new RegExp(`tinker_path: ${TINKER_PATH.replace(/\//g, '\\/')}`));
  });

  test('Merge into Hugging Face Model…: the base folder given, writes the merged shards equal to PEFT’s merge, config and card', async () => {
    const out = path.join(dir, 'merged');
    const answers = api.ui.override({ showInputBox: async () => TINKER_PATH });
    let result: { dir: string; files: string[] } | undefined;
    try {
      result = await vscode.commands.executeCommand<{ dir: string; files: string[] }>('tinker.checkpoints.mergeModel', undefined, undefined, { output: out, base: path.join(FIXTURES, 'qwen3', 'base') });
    } finally {
      answers.dispose();
    }
    assert.ok(result);
    assert.strictEqual(result.dir, out);
    const files = fs.readdirSync(out);
    assert.ok(files.includes('config.json') && files.includes('README.md'), files.join(', '));
    assert.ok(files.filter((f) => f.endsWith('.safetensors')).length >= 1);
    assert.deepStrictEqual(await tensors(out), goldens.families.qwen3.bases.base.tensors);
    const card = fs.readFileSync(path.join(out, 'README.md'), 'utf8');
    assert.match(card, /base_model: Qwen\/Qwen3-8B/);
    assert.match(card, /tinker_path: tinker:\/\/run-export\/sampler_weights\/final/);
  });
});
