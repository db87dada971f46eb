// Publishing an exported folder with the real @huggingface/hub client against a STAND-IN of the Hub's
// routes (hubStandIn.ts; the real Hub cannot be reached here): a new private repo with the push-hf card,
// small files inline and large ones over LFS (basic and multipart), a storage PUT and a commit that
// fail half-way and are retried, a repo that already exists (same checkpoint: updated; another: refused),
// cancel, and an error text that never holds the token.
import * as assert from 'node:assert';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from '../../../src/cli/args';
import { runExport } from '../../../src/cli/export';
import type { ExportArgs } from '../../../src/cli/exportArgs';
import { exportCheckpoint } from '../../../src/core/export/exportCheckpoint';
import { hubTokenFrom, publishToHub, repoIdProblem, type PublishProgress } from '../../../src/core/export/publish';
import { registerFromPath } from '../../../src/core/models/lifecycle';
import { publishAndRecord } from '../../../src/core/models/exports';
import { readRegistry } from '../../../src/core/models/store';
import { startHubStandIn, type HubStandIn } from './hubStandIn';
import { FIXTURES } from './merge.test';

const TOKEN = 'hf_standInSecretToken0123456789';
const TINKER_PATH = 'tinker://run-abc/sampler_weights/000040';

function sha(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

function assertSameFiles(hub: HubStandIn, repo: string, folder: string, names: string[]): void {
  const r = hub.repos.get(repo);
  assert.ok(r, `${repo} exists on the stand-in`);
  for (const n of names) assert.strictEqual(sha(r.files.get(n) ?? Buffer.alloc(0)), sha(fs.readFileSync(path.join(folder, n))), `${n} on the hub equals the local file`);
}

describe('export: publish to the Hugging Face Hub (@huggingface/hub against a stand-in of the Hub)', function () {
  this.timeout(60_000);
  let dir: string;
  let adapterDir: string;
  let mergedDir: string;
  let hub: HubStandIn;

  before(async () => {
    dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'publish-test-'));
    adapterDir = path.join(dir, 'adapter');
    mergedDir = path.join(dir, 'merged');
    const ckpt = path.join(FIXTURES, 'qwen3/checkpoint');
    await exportCheckpoint({ kind: 'adapter', checkpointDir: ckpt, outDir: adapterDir, tinkerPath: TINKER_PATH });
    await exportCheckpoint({ kind: 'merge', checkpointDir: ckpt, outDir: mergedDir, baseDir: path.join(FIXTURES, 'qwen3/base'), tinkerPath: TINKER_PATH, maxShardBytes: 30_000 });
  });
  beforeEach(async () => {
    hub = await startHubStandIn({ token: TOKEN });
  });
  afterEach(async () => hub.close());
  after(async () => fs.promises.rm(dir, { recursive: true, force: true }));

  it('creates a private repo, uploads the adapter (card inline, weights over LFS) and links to it', async () => {
    const events: PublishProgress[] = [];
    const r = await publishToHub({ folder: adapterDir, repo: 'alice/qwen3-lora', token: TOKEN, hubUrl: hub.url, onProgress: (p) => events.push(p) });
    assert.strictEqual(r.created, true);
    assert.strictEqual(r.private, true);
    assert.strictEqual(hub.repos.get('alice/qwen3-lora')?.private, true, 'private unless asked');
    assert.strictEqual(r.url, `${hub.url}/alice/qwen3-lora`);
    const names = fs.readdirSync(adapterDir).sort();
    assertSameFiles(hub, 'alice/qwen3-lora', adapterDir, names);
    assert.deepStrictEqual(r.files.map((f) => f.path), names);
    assert.ok(hub.lfs.has(sha(fs.readFileSync(path.join(adapterDir, 'adapter_model.safetensors')))), 'the weights went over LFS');
    assert.ok(hub.seen.includes('POST /alice/qwen3-lora.git/info/lfs/objects/batch'));
    const card = hub.repos.get('alice/qwen3-lora')!.files.get('README.md')!.toString('utf8');
    for (const line of ['base_model: Qwen/Qwen3-8B', 'library_name: peft', '- tinker', '- peft', '- lora', '- base_model:adapter:Qwen/Qwen3-8B', `tinker_path: ${TINKER_PATH}`]) assert.ok(card.split('\n').includes(line), `the card has "${line}"`);
    assert.ok(!hub.repos.get('alice/qwen3-lora')!.files.has('checkpoint_complete'));
    assert.ok(events.some((e) => e.phase === 'uploading' && e.file === 'adapter_model.safetensors'));
    const last = events.at(-1);
    assert.ok(last && last.phase === 'done' && last.done === last.total, 'progress reaches the total');
    assert.match(r.sha256, /^[0-9a-f]{64}$/);
  });

  it('--public makes a public repo; a folder without a README gets the push-hf card', async () => {
    const bare = path.join(dir, 'bare');
    fs.cpSync(adapterDir, bare, { recursive: true });
    fs.rmSync(path.join(bare, 'README.md'));
    const r = await publishToHub({ folder: bare, repo: 'alice/bare', token: TOKEN, hubUrl: hub.url, public: true, tinkerPath: TINKER_PATH });
    assert.strictEqual(hub.repos.get('alice/bare')?.private, false);
    assert.strictEqual(r.private, false);
    const card = hub.repos.get('alice/bare')!.files.get('README.md')!.toString('utf8');
    assert.ok(card.startsWith('---\nbase_model: Qwen/Qwen3-8B\n'));
    assert.ok(card.includes('- base_model:adapter:Qwen/Qwen3-8B\n') && card.includes(`tinker_path: ${TINKER_PATH}\n`));
  });

  it('a storage PUT that fails half-way is retried, and the files arrive whole', async () => {
    hub.failLfsPut = { nth: 2, status: 503 };
    const retries: number[] = [];
    const r = await publishToHub({ folder: mergedDir, repo: 'alice/merged', token: TOKEN, hubUrl: hub.url, onProgress: (p) => p.phase === 'retrying' && retries.push(p.attempt!) });
    assert.deepStrictEqual(retries, [2]);
    assertSameFiles(hub, 'alice/merged', mergedDir, fs.readdirSync(mergedDir));
    assert.strictEqual(hub.repos.get('alice/merged')!.commits.length, 1);
    assert.ok(r.commit);
  });

  it('a commit that fails after the large files are stored is retried without sending them again', async () => {
    hub.failCommits = 1;
    const r = await publishToHub({ folder: mergedDir, repo: 'alice/merged2', token: TOKEN, hubUrl: hub.url });
    const large = fs.readdirSync(mergedDir).filter((f) => fs.statSync(path.join(mergedDir, f)).size >= hub.lfsAbove);
    assert.ok(large.filter((f) => f.endsWith('.safetensors')).length >= 3, 'several shards');
    assert.strictEqual(hub.lfsPuts, large.length, 'each large file was PUT once: the retry found them stored');
    assert.strictEqual(hub.seen.filter((s) => s === 'POST /api/models/alice/merged2/commit/main').length, 2);
    assertSameFiles(hub, 'alice/merged2', mergedDir, fs.readdirSync(mergedDir));
    assert.strictEqual(r.created, true);
  });

  it('large files go multipart when the Hub asks for it', async () => {
    hub.multipartAbove = 16 * 1024;
    hub.chunkSize = 8 * 1024;
    await publishToHub({ folder: adapterDir, repo: 'alice/parts', token: TOKEN, hubUrl: hub.url });
    assert.ok(hub.seen.some((s) => /^PUT \/storage\/[0-9a-f]{64}\/part\/3$/.test(s)));
    assertSameFiles(hub, 'alice/parts', adapterDir, fs.readdirSync(adapterDir));
  });

  it('a repo that already exists with the same checkpoint is updated; with another checkpoint it is refused', async () => {
    await publishToHub({ folder: adapterDir, repo: 'alice/again', token: TOKEN, hubUrl: hub.url });
    const again = await publishToHub({ folder: adapterDir, repo: 'alice/again', token: TOKEN, hubUrl: hub.url, public: true });
    assert.strictEqual(again.created, false);
    assert.strictEqual(hub.repos.get('alice/again')!.private, true, 'an existing repo keeps its visibility');
    assert.strictEqual(hub.repos.get('alice/again')!.commits.length, 2);
    await assert.rejects(
      publishToHub({ folder: adapterDir, repo: 'alice/again', token: TOKEN, hubUrl: hub.url, tinkerPath: 'tinker://run-other/sampler_weights/000001' }),
      (err: Error) => err.message.includes('already holds another Tinker checkpoint') && err.message.includes(TINKER_PATH),
    );
    assert.strictEqual(hub.repos.get('alice/again')!.commits.length, 2, 'nothing was committed');
  });

  it('cancel stops the upload and commits nothing', async () => {
    const ac = new AbortController();
    await assert.rejects(
      publishToHub({ folder: mergedDir, repo: 'alice/cancel', token: TOKEN, hubUrl: hub.url, signal: ac.signal, onProgress: (p) => p.phase === 'uploading' && ac.abort() }),
      /cancelled; nothing was committed/,
    );
    assert.strictEqual(hub.repos.get('alice/cancel')?.commits.length ?? 0, 0);
  });

  it('an error text never holds the token, even when the server echoes it', async () => {
    hub.echoAuthInErrors = true;
    hub.failCommits = 5;
    let message = '';
    await publishToHub({ folder: adapterDir, repo: 'alice/echo', token: TOKEN, hubUrl: hub.url, attempts: 2 }).catch((err: Error) => (message = err.message));
    assert.ok(message.includes('commit service is unavailable') && message.includes('Bearer ***'), message);
    assert.ok(!message.includes(TOKEN));
    await publishToHub({ folder: adapterDir, repo: 'alice/echo2', token: 'hf_wrongToken987654321', hubUrl: hub.url }).catch((err: Error) => (message = err.message));
    assert.ok(message.includes('refused the token (401)') && !message.includes('hf_wrongToken987654321'), message);
  });

  it('records the publish (folder, sha256, hub URL) on the registry\'s version of the checkpoint', async () => {
    const regFile = path.join(dir, 'ws', 'tinker-models.json');
    await registerFromPath(regFile, { name: 'qwen-math', samplerPath: TINKER_PATH, baseModel: 'Qwen/Qwen3-8B', by: { os_user: 'test' } });
    const out = await publishAndRecord({ folder: adapterDir, repo: 'alice/recorded', token: TOKEN, hubUrl: hub.url, tinkerPath: TINKER_PATH, registryFile: regFile });
    assert.strictEqual(out.version, 'qwen-math@v1');
    const v = (await readRegistry(regFile)).versions[0]!;
    assert.strictEqual(v.exports?.length, 1);
    assert.deepStrictEqual({ path: v.exports[0]!.path, sha256: v.exports[0]!.sha256, hub: v.exports[0]!.hub_url, private: v.exports[0]!.private }, { path: '../adapter', sha256: out.published.sha256, hub: `${hub.url}/alice/recorded`, private: true });
    const other = await publishAndRecord({ folder: adapterDir, repo: 'alice/unrecorded', token: TOKEN, hubUrl: hub.url, tinkerPath: 'tinker://elsewhere/sampler_weights/1', registryFile: regFile });
    assert.strictEqual(other.version, undefined, 'no version has that checkpoint: nothing recorded');
    assert.strictEqual((await readRegistry(regFile)).versions[0]!.exports?.length, 1);
  });

  it('CLI: tinker-studio export publish takes HF_TOKEN and HF_ENDPOINT, says where it went, and never prints the token', async () => {
    const args = parseArgs(['export', 'publish', adapterDir, '--repo', 'alice/from-cli', '--public']) as ExportArgs;
    assert.deepStrictEqual([args.kind, args.repo, args.public], ['publish', 'alice/from-cli', true]);
    assert.throws(() => parseArgs(['export', 'publish', adapterDir]), /--repo OWNER\/NAME/);
    assert.throws(() => parseArgs(['export', 'publish', adapterDir, '--repo', 'nobody']), /owner\/name/);
    let out = '';
    let err = '';
    const io = { out: (t: string) => (out += t), err: (t: string) => (err += t), connect: () => Promise.reject(new Error('no backend is needed for a folder')) };
    const env = { HF_TOKEN: TOKEN, HF_ENDPOINT: hub.url, TINKER_STUDIO_REGISTRY: path.join(dir, 'none.json') };
    assert.strictEqual(await runExport(args, { ...io, env }), 0, err);
    assert.strictEqual(out, `created public repo alice/from-cli: ${hub.url}/alice/from-cli\n`);
    assert.strictEqual(hub.repos.get('alice/from-cli')?.private, false);
    hub.echoAuthInErrors = true;
    hub.failCommits = 10;
    err = '';
    assert.strictEqual(await runExport(parseArgs(['export', 'publish', adapterDir, '--repo', 'alice/from-cli-2']) as ExportArgs, { ...io, env }), 1);
    assert.ok(err.includes('commit service is unavailable') && !err.includes(TOKEN), err);
    err = '';
    assert.strictEqual(await runExport(args, { ...io, env: { HF_ENDPOINT: hub.url, TINKER_API_KEY: 'tml-secret-key' } }), 1);
    assert.match(err, /no Hugging Face token: set HF_TOKEN/);
  });

  it('names the repo id rules and the token sources', () => {
    assert.strictEqual(repoIdProblem('alice/qwen3-lora'), undefined);
    assert.match(repoIdProblem('qwen3-lora') ?? '', /owner\/name/);
    assert.match(repoIdProblem('alice/a--b') ?? '', /"--"/);
    assert.strictEqual(hubTokenFrom(undefined, { HF_TOKEN: 'hf_env', TINKER_API_KEY: 'tml-key' }), 'hf_env');
    assert.strictEqual(hubTokenFrom('hf_stored', { HF_TOKEN: 'hf_env' }), 'hf_stored');
    assert.strictEqual(hubTokenFrom(undefined, { TINKER_API_KEY: 'tml-key' }), undefined, 'never the Tinker key');
  });
});
