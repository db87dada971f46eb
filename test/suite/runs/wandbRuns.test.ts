// W&B from the extension host, against the recording W&B stand-in (test/unit/tracking/wandbStandIn.ts;
// W&B's servers cannot run here) set as tinker.wandb.baseUrl, through the real @wandb/sdk in the real
// logger child process (dist/wandbLogger.js) that the extension forks. The key commands store in and
// remove from SecretStorage (the input box answered through the test handles' window seam); an SFT
// run with wandb_project logs there with that key; config.json, the Runs view tooltip, the metrics
// panel header and the comparison carry the link, and "Open in W&B" opens it (captured, no browser);
// with W&B answering 500 or 401 the run completes, the warning notification comes once, and the key
// is in neither the output channel's log file nor the run directory. The settings: tinker.wandb.project
// for specs without wandb_project, and tinker.wandb.baseUrl writable only in the user's settings.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { SftRunResult } from '../../../src/core/runs/runEvents';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { Redactor } from '../../../src/core/config/redact';
import { escapeMarkdown } from '../../../src/core/text/markdown';
import { Log } from '../../../src/vscode/common/log';
import type { Releasable } from '../../../src/vscode/common/lifecycle';
import { overrideWindowUi } from '../../../src/vscode/common/windowUi';
import { metricsPanels } from '../../../src/vscode/metrics/metricsPanels';
import { comparePanels } from '../../../src/vscode/experiments/comparePanels';
import type { ToWebview as MetricsToWebview } from '../../../src/protocol/metricsProtocol';
import type { ToWebview as CompareToWebview } from '../../../src/protocol/compareProtocol';
import { WandbStandIn, type StandInMode } from '../../unit/tracking/wandbStandIn';
import { TransportRecorder } from '../common/recordingTransport';
import { EXTENSION_ID, useLocalEngineAndRunsFolder, waitFor } from '../helpers';

const RUN_TIMEOUT = 240_000;
const KEY = 'hoststandinkey_' + 'd'.repeat(25);
const SECRET = 'tinker.wandbApiKey';
const PROJECT = 'tinker-studio-host';

/** A folder with chats.jsonl and <name>.sft.json logging to W&B project PROJECT; returns the spec path. */
function writeWandbSpec(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-wandb-spec-'));
  const chats = Array.from({ length: 16 }, (_, i) => JSON.stringify({ messages: [{ role: 'user', content: `${i % 10}+1=` }, { role: 'assistant', content: String((i % 10) + 1) }] }));
  fs.writeFileSync(path.join(dir, 'chats.jsonl'), chats.join('\n') + '\n');
  const spec = { name, backend: 'local', model: 'tinker-studio/random-gpt', lora_rank: 4, learning_rate: 0.01, batch_size: 4, max_steps: 3, eval_every: 0, save_every: 0, wandb_project: PROJECT, dataset: { path: 'chats.jsonl' } };
  const file = path.join(dir, `${name}.sft.json`);
  fs.writeFileSync(file, JSON.stringify(spec, null, 2) + '\n');
  return file;
}

/** Every file below `dir` (recursively) whose text contains `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const file = path.join(e.parentPath, e.name);
    if (fs.readFileSync(file).includes(needle)) out.push(file);
  }
  return out;
}

const metricsSteps = (runDir: string) =>
  fs
    .readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => (JSON.parse(l) as { step: number }).step);

suite('W&B from the extension host (against a stand-in W&B server)', function () {
  this.timeout(RUN_TIMEOUT);
  const suiteState = useLocalEngineAndRunsFolder('tinker-wandb-runs-');
  let api: TinkerStudioTestHandles;
  let standIn: WandbStandIn;
  let baseUrl: string;
  let seams: Releasable[] = [];
  const logDir = () => api.logUri.fsPath;

  suiteSetup(async () => {
    api = suiteState.api();
    standIn = new WandbStandIn();
    baseUrl = await standIn.listen();
    await vscode.workspace.getConfiguration('tinker').update('wandb.baseUrl', baseUrl, vscode.ConfigurationTarget.Global);
  });
  suiteTeardown(async () => {
    await vscode.workspace.getConfiguration('tinker').update('wandb.baseUrl', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('tinker.clearWandbApiKey');
    await standIn.close();
  });
  setup(() => {
    standIn.mode = 'ok';
    standIn.requests.length = 0;
  });
  teardown(() => {
    for (const s of seams) s.dispose();
    seams = [];
  });

  test('Set W&B API Key asks in a password box and stores the key in SecretStorage; cancelling keeps it; Clear removes it', async () => {
    await vscode.commands.executeCommand('tinker.clearWandbApiKey');
    const asked: vscode.InputBoxOptions[] = [];
    let answer: string | undefined = `  ${KEY}  `;
    seams.push(api.ui.override({ showInputBox: async (o) => (asked.push(o), answer) }));
    assert.strictEqual(await vscode.commands.executeCommand('tinker.setWandbApiKey'), true);
    assert.strictEqual(asked.length, 1);
    assert.strictEqual(asked[0].title, 'Tinker: Set W&B API Key');
    assert.strictEqual(asked[0].password, true, 'typed as a password');
    assert.strictEqual(asked[0].ignoreFocusOut, true);
    assert.strictEqual(asked[0].validateInput?.('two words'), 'A W&B API key is one word with no spaces.');
    assert.strictEqual(asked[0].validateInput?.(''), 'A W&B API key is one word with no spaces.');
    assert.strictEqual(asked[0].validateInput?.(KEY), undefined);
    assert.strictEqual(await api.secrets.get(SECRET), KEY, 'stored trimmed, in SecretStorage');
    assert.ok(!JSON.stringify(vscode.workspace.getConfiguration('tinker')).includes(KEY), 'never in settings');

    answer = undefined; // Escape in the input box
    assert.strictEqual(await vscode.commands.executeCommand('tinker.setWandbApiKey'), false);
    assert.strictEqual(await api.secrets.get(SECRET), KEY, 'a cancelled prompt keeps the stored key');

    await vscode.commands.executeCommand('tinker.clearWandbApiKey');
    assert.strictEqual(await api.secrets.get(SECRET), undefined, 'Clear W&B API Key removes it');
  });

  test('the Tinker key command shares the prompt with its own rules (tml- keys) and its own secret', async () => {
    await vscode.commands.executeCommand('tinker.clearApiKey');
    const before = await api.apiKeySource();
    const asked: vscode.InputBoxOptions[] = [];
    seams.push(api.ui.override({ showInputBox: async (o) => (asked.push(o), 'tml-host-test-0123456789') }));
    assert.strictEqual(await vscode.commands.executeCommand('tinker.setApiKey'), true);
    assert.strictEqual(asked[0].title, 'Tinker: Set API Key');
    assert.strictEqual(asked[0].placeHolder, 'tml-…');
    assert.strictEqual(asked[0].password, true);
    assert.match(String(asked[0].validateInput?.(KEY)), /start with "tml-"/, 'a W&B key is not a Tinker key');
    assert.strictEqual(asked[0].validateInput?.('tml-abc'), undefined);
    assert.strictEqual(await api.apiKeySource(), 'secret-storage');
    assert.strictEqual(await api.secrets.get(SECRET), undefined, 'the W&B secret is untouched');
    await vscode.commands.executeCommand('tinker.clearApiKey');
    assert.strictEqual(await api.apiKeySource(), before);
  });

  test('a run with wandb_project logs to the W&B host with the key from SecretStorage; config.json, the Runs view tooltip, the metrics panel and the comparison link it; Open in W&B opens it', async () => {
    assert.strictEqual(await vscode.commands.executeCommand('tinker.setWandbApiKey', KEY), true);
    const opened: string[] = [];
    const warnings: string[] = [];
    seams.push(
      api.ui.override({
        openExternal: async (uri) => (opened.push(uri.toString(true)), true),
        showWarningMessage: async (m) => (warnings.push(m), undefined),
      }),
    );
    const result = await vscode.commands.executeCommand<SftRunResult>('tinker.startSftRun', vscode.Uri.file(writeWandbSpec('wandb-host')));
    assert.ok(result, 'the command returns the run result');
    assert.strictEqual(result.status, 'completed', result.error);
    assert.deepStrictEqual(warnings, []);
    const config = JSON.parse(fs.readFileSync(path.join(result.runDir, 'config.json'), 'utf8')) as { wandb: { id: string; url: string; wandb_project: string } };
    assert.match(config.wandb.id, /^[0-9a-f]{12}$/);
    const url = `${baseUrl}/stand-in-user/${PROJECT}/runs/${config.wandb.id}`;
    assert.strictEqual(config.wandb.url, url);
    assert.strictEqual(config.wandb.wandb_project, PROJECT);

    // at the stand-in: the run by its id and name, every metrics row with its step, the key as W&B's Basic auth
    const ups = standIn.upserts();
    assert.deepStrictEqual(ups.map((u) => [u.name, u.displayName, u.project]), [[config.wandb.id, path.basename(result.runDir), PROJECT]]);
    const rows = standIn.history(config.wandb.id).filter((h) => h.train_mean_nll !== undefined);
    assert.deepStrictEqual(rows.map((h) => h._step), metricsSteps(result.runDir));
    assert.ok(standIn.completed(config.wandb.id));
    const basic = `Basic ${Buffer.from(`api:${KEY}`).toString('base64')}`;
    assert.ok(standIn.requests.length > 0 && standIn.requests.every((r) => r.authorization === basic), 'the key from SecretStorage, on every request');

    // the Runs view tooltip
    const row = await waitFor('the run in the Runs view', async () => (await api.runsTree.localRuns()).find((r) => r.run.dir === result.runDir));
    const tip = api.runsTree.getTreeItem(row).tooltip;
    assert.ok(tip instanceof vscode.MarkdownString);
    assert.ok(tip.value.includes(`W&B: [${escapeMarkdown(url)}](${url})`), tip.value);

    // Open in W&B (the Runs view's context menu passes the run)
    assert.strictEqual(await vscode.commands.executeCommand('tinker.openInWandb', result.runDir), url);
    assert.deepStrictEqual(opened, [url]);

    // the metrics panel: the header's link, and its button opens the same page. The panels built
    // here (with a recording transport) are this test's compiled modules, not the bundle's, so their
    // window seam is answered here too.
    seams.push(overrideWindowUi({ openExternal: async (uri) => (opened.push(uri.toString(true)), true) }));
    const log = new Log(new Redactor(), 'Tinker (test)');
    const recorder = new TransportRecorder();
    const extensionUri = vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri;
    const metrics = metricsPanels({ extensionUri, log, registry: api.registry, openIteration: async () => true }, recorder.factory);
    const compare = comparePanels({ extensionUri, log, registry: api.registry, cacheFolder: fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-wandb-cache-')), openIteration: async () => true, compareSamples: async () => undefined }, recorder.factory);
    try {
      const panel = await metrics.open(result.runDir);
      const transport = recorder.of(panel.panel);
      const snap = await waitFor('the metrics snapshot', () => transport.ofType<Extract<MetricsToWebview, { type: 'snapshot' }>>('snapshot').at(-1), 30_000);
      assert.strictEqual(snap.run.wandbUrl, url);
      await transport.deliver({ type: 'openWandb' });
      await waitFor('the metrics panel to open the W&B page', () => opened.length === 2);
      assert.deepStrictEqual(opened, [url, url]);

      // the comparison table: the run's W&B link (its id and URL are not config columns of their own)
      const cmp = await compare.open({ runDirs: [result.runDir] });
      const ct = recorder.of(cmp.panel);
      const csnap = await waitFor('the comparison snapshot', () => ct.ofType<Extract<CompareToWebview, { type: 'snapshot' }>>('snapshot').at(-1), 30_000);
      assert.strictEqual(csnap.runs[0].config['wandb.url'], url);
      await ct.deliver({ type: 'openWandb', id: result.runDir });
      await waitFor('the comparison to open the W&B page', () => opened.length === 3);
      assert.deepStrictEqual(opened, [url, url, url]);
    } finally {
      metrics.dispose();
      compare.dispose();
      log.dispose();
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    }

    // the key: in no file of the run directory, nor in the output channel's log (which has the run's W&B line)
    assert.deepStrictEqual(filesContaining(result.runDir, KEY), []);
    await waitFor('the W&B line in the output channel log file', () => filesContaining(logDir(), `W&B run: ${url}`).length > 0, 30_000);
    assert.deepStrictEqual(filesContaining(logDir(), KEY), []);
  });

  test('settings: tinker.wandb.project names the project of a run whose spec has none; a workspace cannot set tinker.wandb.baseUrl', async () => {
    assert.strictEqual(await vscode.commands.executeCommand('tinker.setWandbApiKey', KEY), true);
    const c = vscode.workspace.getConfiguration('tinker');
    await c.update('wandb.project', 'from-the-setting', vscode.ConfigurationTarget.Global);
    try {
      const specFile = writeWandbSpec('wandb-setting');
      const spec = JSON.parse(fs.readFileSync(specFile, 'utf8')) as Record<string, unknown>;
      delete spec.wandb_project;
      fs.writeFileSync(specFile, JSON.stringify(spec));
      const result = await vscode.commands.executeCommand<SftRunResult>('tinker.startSftRun', vscode.Uri.file(specFile));
      assert.ok(result);
      assert.strictEqual(result.status, 'completed', result.error);
      assert.deepStrictEqual(standIn.upserts().map((u) => u.project), ['from-the-setting']);
    } finally {
      await c.update('wandb.project', undefined, vscode.ConfigurationTarget.Global);
    }
    // application scope: only the user's own settings may redirect the key; a cloned workspace cannot
    assert.ok(vscode.workspace.workspaceFolders?.length, 'a workspace is open');
    await assert.rejects(
      Promise.resolve(vscode.workspace.getConfiguration('tinker').update('wandb.baseUrl', 'http://127.0.0.1:9/steal', vscode.ConfigurationTarget.Workspace)),
      /can be written only into User settings/,
    );
    assert.strictEqual(vscode.workspace.getConfiguration('tinker').get('wandb.baseUrl'), baseUrl);
    const manifest = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { capabilities: { untrustedWorkspaces: { restrictedConfigurations: string[] } } };
    assert.ok(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations.includes('tinker.wandb.baseUrl'), 'restricted in untrusted workspaces');
  });

  for (const mode of ['status500', 'status401'] as StandInMode[]) {
    test(`W&B answering ${mode.slice(6)}: the run completes with all its steps, one warning notification, the key in no log or run file`, async () => {
      assert.strictEqual(await vscode.commands.executeCommand('tinker.setWandbApiKey', KEY), true);
      standIn.mode = mode;
      const warnings: { message: string; items: string[] }[] = [];
      seams.push(api.ui.override({ showWarningMessage: async (message, ...items) => (warnings.push({ message, items }), undefined) }));
      const name = `wandb-${mode}`;
      const result = await vscode.commands.executeCommand<SftRunResult>('tinker.startSftRun', vscode.Uri.file(writeWandbSpec(name)));
      assert.ok(result);
      assert.strictEqual(result.status, 'completed', result.error);
      assert.deepStrictEqual(metricsSteps(result.runDir), [0, 1, 2], 'every step trained and written');
      assert.ok(standIn.requests.length > 0, 'the logger did call the stand-in');
      assert.strictEqual(warnings.length, 1, `one warning: ${JSON.stringify(warnings)}`);
      assert.match(warnings[0].message, new RegExp(`^${name}: W&B logging is failing: .*Training goes on`));
      assert.deepStrictEqual(warnings[0].items, ['Set W&B API Key']);
      assert.ok(!warnings[0].message.includes(KEY));
      const config = JSON.parse(fs.readFileSync(path.join(result.runDir, 'config.json'), 'utf8')) as { wandb: { id: string; url?: string } };
      assert.match(config.wandb.id, /^[0-9a-f]{12}$/, 'the id is chosen locally before W&B answers');
      assert.strictEqual(config.wandb.url, undefined, 'no URL: W&B never answered');
      assert.deepStrictEqual(filesContaining(result.runDir, KEY), []);
      await waitFor('the W&B count in the output channel log file', () => filesContaining(logDir(), `[${name}] W&B: 0 of 3 rows sent`).length > 0, 30_000);
      assert.deepStrictEqual(filesContaining(logDir(), KEY), []);
    });
  }
});
