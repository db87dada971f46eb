// "Publish to Hugging Face Hub…" in the extension host against a STAND-IN of the Hub's routes (the real
// Hub cannot be reached here): the token set through "Tinker: Set Hugging Face Token" (its password box
// answered through the window seam) and kept in SecretStorage, an exported adapter folder published to a
// private repo, and a failing Hub whose error notification never holds the token; "Clear Hugging Face
// Token" forgets it.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import type { Releasable } from '../../../src/vscode/common/lifecycle';
import { exportCheckpoint } from '../../../src/core/export/exportCheckpoint';
import { startHubStandIn, type HubStandIn } from '../../unit/export/hubStandIn';
import { activateExtension } from '../helpers';

const TOKEN = 'hf_hostStandInToken0123456789';
const FIXTURE = path.resolve(__dirname, '../../../../test/fixtures/export/qwen3/checkpoint');

suite('Publish to Hugging Face Hub (against a stand-in of the Hub)', function () {
  this.timeout(120_000);
  let api: TinkerStudioTestHandles;
  let hub: HubStandIn;
  let dir: string;
  let folder: string;
  const seams: Releasable[] = [];

  suiteSetup(async () => {
    api = await activateExtension();
    hub = await startHubStandIn({ token: TOKEN });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-host-publish-'));
    folder = path.join(dir, 'adapter');
    await exportCheckpoint({ kind: 'adapter', checkpointDir: FIXTURE, outDir: folder, tinkerPath: 'tinker://host-run/sampler_weights/final' });
  });
  suiteTeardown(async () => {
    for (const s of seams) s.dispose();
    await hub.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the token from its password box; a private repo with the files; a failing Hub never shows the token', async () => {
    const asked: vscode.InputBoxOptions[] = [];
    seams.push(api.ui.override({ showInputBox: async (o) => (asked.push(o), `  ${TOKEN} `) }));
    assert.strictEqual(await vscode.commands.executeCommand('tinker.setHuggingFaceToken'), true);
    assert.strictEqual(asked[0]?.password, true);
    const answers = { folder, repo: 'host/qwen3-lora', confirm: true, public: false, hubEndpoint: hub.url };
    const r = (await vscode.commands.executeCommand('tinker.checkpoints.publishToHub', undefined, undefined, answers)) as { url: string; private: boolean; created: boolean };
    assert.deepStrictEqual([r.url, r.private, r.created], [`${hub.url}/host/qwen3-lora`, true, true]);
    const repo = hub.repos.get('host/qwen3-lora');
    assert.strictEqual(repo?.private, true);
    assert.deepStrictEqual([...repo.files.keys()].sort(), fs.readdirSync(folder).sort());
    assert.ok(hub.seen.includes('POST /host/qwen3-lora.git/info/lfs/objects/batch'));

    hub.echoAuthInErrors = true;
    hub.failCommits = 10;
    const logText = () => !fs.existsSync(api.logUri.fsPath) ? '' : fs.readdirSync(api.logUri.fsPath, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => fs.readFileSync(path.join(e.parentPath, e.name), 'utf8')).join('\n');
    const out = await vscode.commands.executeCommand('tinker.checkpoints.publishToHub', undefined, undefined, { ...answers, repo: 'host/failing' });
    assert.strictEqual(out, undefined, 'the command table shows the error instead of throwing');
    assert.ok(!hub.repos.get('host/failing')?.commits.length);
    assert.ok(!logText().includes(TOKEN), 'the token is in no log');
  });

  test('"Clear Hugging Face Token" forgets it: publishing then asks for a token and publishes nothing', async () => {
    assert.ok(!process.env.HF_TOKEN, 'the host tests run without HF_TOKEN (it would stand in for the cleared token)');
    const warnings: string[] = [];
    seams.push(api.ui.override({ showWarningMessage: async (m) => (warnings.push(m), undefined) }));
    assert.strictEqual(await vscode.commands.executeCommand('tinker.clearHuggingFaceToken'), true);
    const answers = { folder, repo: 'host/after-clear', confirm: true, public: false, hubEndpoint: hub.url };
    assert.strictEqual(await vscode.commands.executeCommand('tinker.checkpoints.publishToHub', undefined, undefined, answers), undefined);
    assert.ok(warnings.some((m) => m.startsWith('Publishing needs a Hugging Face token')), JSON.stringify(warnings));
    assert.strictEqual(hub.repos.get('host/after-clear'), undefined, 'nothing reached the Hub');
  });
});
