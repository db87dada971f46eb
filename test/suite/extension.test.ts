// The extension inside a real VS Code extension host: activation, contributions, commands, views,
// settings, secrets and the transcript language; the public API, and internals through the test handles.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { PUBLIC_API_MEMBERS } from '../../src/api';
import { TEST_HANDLES_COMMAND } from '../../src/vscode/common/testHooks';
import { EXTENSION_ID, activateExtension, activatePublicApi, waitFor, waitForRunsWatcher, workspaceRoot } from './helpers';

interface Contributions {
  commands: Array<{ command: string; title: string; category?: string }>;
  views: Record<string, Array<{ id: string; name: string }>>;
  viewsWelcome: Array<{ view: string; contents: string }>;
  configuration: { properties: Record<string, unknown> };
}

function contributions(): Contributions {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  assert.ok(ext);
  return ext.packageJSON.contributes as Contributions;
}

suite('Tinker Studio in the extension host', () => {
  suiteTeardown(async () => {
    await vscode.workspace.getConfiguration('tinker').update('backend', undefined, vscode.ConfigurationTarget.Global);
    await vscode.workspace.getConfiguration('tinker').update('customBaseUrl', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('tinker.clearApiKey');
  });

  test('activates and reports how long activation took', async () => {
    const api = await activatePublicApi();
    assert.strictEqual(typeof api.activationMs, 'number');
    assert.ok(api.activationMs >= 0);
    console.log(`activate() took ${api.activationMs.toFixed(1)} ms`);
  });

  test('the public API has exactly the documented members and follows the runs folder', async () => {
    const api = await activatePublicApi();
    assert.deepStrictEqual(Object.keys(api).sort(), [...PUBLIC_API_MEMBERS].sort());
    const handles = await activateExtension();
    assert.strictEqual(api.runsFolder(), handles.runs.runsFolder);
    const fired = new Promise<void>((resolve) => {
      const sub = api.onDidChangeRuns(() => {
        sub.dispose();
        resolve();
      });
    });
    await waitForRunsWatcher(handles);
    await fired;
  });

  test('the test handles are behind a command that is not contributed', () => {
    assert.ok(!contributions().commands.some((c) => c.command === TEST_HANDLES_COMMAND), `${TEST_HANDLES_COMMAND} is in no palette or menu`);
  });

  test('every contributed command is registered, in the Tinker category, and nothing else is', async () => {
    await activateExtension();
    const registered = new Set((await vscode.commands.getCommands(true)).filter((c) => c.startsWith('tinker.')));
    const contributed = contributions().commands;
    for (const c of contributed) {
      assert.ok(registered.has(c.command), `${c.command} is registered`);
      assert.strictEqual(c.category, 'Tinker', `${c.command} is in the Tinker category`);
    }
    const contributedIds = new Set(contributed.map((c) => c.command));
    // The workbench adds <viewId>.focus and friends for each view; everything else must be contributed.
    const stray = [...registered].filter((id) => !contributedIds.has(id) && !/^tinker\.(runs|checkpoints|models)\./.test(id));
    assert.deepStrictEqual(stray, [], 'no registered command lacks a contribution');
  });

  test('the Tinker container has the Runs, Checkpoints and Models views, each with welcome content', () => {
    const c = contributions();
    assert.deepStrictEqual(
      c.views.tinker.map((v) => [v.id, v.name]),
      [
        ['tinker.runs', 'Runs'],
        ['tinker.checkpoints', 'Checkpoints'],
        ['tinker.models', 'Models'],
      ],
    );
    for (const id of ['tinker.runs', 'tinker.checkpoints', 'tinker.models']) {
      assert.ok(c.viewsWelcome.some((w) => w.view === id && w.contents.length > 20), `${id} has welcome content`);
    }
    assert.ok('tinker.backend' in c.configuration.properties);
  });

  test('the Runs view lists the run directories of the workspace runs folder', async () => {
    const api = await activateExtension();
    await vscode.commands.executeCommand('tinker.runs.focus');
    const row = await waitFor('the fixture run', async () => (await api.runsTree.localRuns()).find((r) => r.run.name === 'arith-demo'));
    const item = api.runsTree.getTreeItem(row);
    assert.strictEqual(item.label, 'arith-demo');
    assert.strictEqual(item.description, 'iteration 2 · reward 0.500 · not finished');
    assert.strictEqual(row.status, 'not finished');
  });

  test('a run written while the view is open appears without a manual refresh', async () => {
    const api = await activateExtension();
    await api.runsTree.getChildren();
    await waitForRunsWatcher(api);
    const dir = path.join(workspaceRoot(), 'runs', 'live-run');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'metrics.jsonl'), '{"step": 0, "env/all/reward/total": 0.125}\n');
    const row = await waitFor('live-run in the Runs view', async () => (await api.runsTree.localRuns()).find((r) => r.run.name === 'live-run'));
    assert.strictEqual(api.runsTree.getTreeItem(row).description, 'iteration 0 · reward 0.125 · not finished');
  });

  test('the Checkpoints view shows checkpoints by run, and copies a tinker:// path', async () => {
    const api = await activateExtension();
    const runNode = await waitFor('the run with checkpoints', async () =>
      (await api.checkpointsTree.getChildren()).find((n) => n.kind === 'run' && n.run.name === 'arith-demo'),
    );
    const [ckpt] = await api.checkpointsTree.getChildren(runNode);
    assert.ok(ckpt && ckpt.kind === 'checkpoint');
    const item = api.checkpointsTree.getTreeItem(ckpt);
    assert.strictEqual(item.label, '000002');
    assert.match(String(item.description), /^state \+ sampler · batch 2 · \d{4}-\d\d-\d\d \d\d:\d\d$/, 'kinds, batch, and the time (file mtime: the record has none)');
    assert.strictEqual(item.contextValue, 'tinker.checkpoint');
    const copied = await vscode.commands.executeCommand<string>('tinker.copyCheckpointPath', ckpt, 'state');
    assert.strictEqual(copied, 'tinker://run-1/weights/000002');
  });

  test('Select Backend writes the setting, including a custom server URL', async () => {
    await activateExtension();
    const kind = await vscode.commands.executeCommand('tinker.selectBackend', 'custom', 'http://127.0.0.1:8000');
    assert.strictEqual(kind, 'custom');
    const c = vscode.workspace.getConfiguration('tinker');
    assert.strictEqual(c.get('backend'), 'custom');
    assert.strictEqual(c.get('customBaseUrl'), 'http://127.0.0.1:8000');
    await vscode.commands.executeCommand('tinker.selectBackend', 'local');
    assert.strictEqual(vscode.workspace.getConfiguration('tinker').get('backend'), 'local');
  });

  test('Set API Key stores a valid key in secret storage and refuses a malformed one', async () => {
    const api = await activateExtension();
    await vscode.commands.executeCommand('tinker.clearApiKey');
    const before = await api.apiKeySource();
    assert.ok(before === undefined || before === 'environment');
    await vscode.commands.executeCommand('tinker.setApiKey', 'not a key');
    assert.strictEqual(await api.apiKeySource(), before, 'a malformed key is not stored');
    await vscode.commands.executeCommand('tinker.setApiKey', 'tml-test-0123456789abcdef');
    await waitFor('the key in secret storage', async () => (await api.apiKeySource()) === 'secret-storage');
    const settings = JSON.stringify(vscode.workspace.getConfiguration('tinker'));
    assert.ok(!settings.includes('tml-test-0123456789abcdef'), 'the key is not in settings');
    await vscode.commands.executeCommand('tinker.clearApiKey');
    assert.strictEqual(await api.apiKeySource(), before);
  });

  test('Show Available Models starts the local engine and lists the models it serves', async () => {
    await activateExtension();
    await vscode.commands.executeCommand('tinker.selectBackend', 'local');
    const models = await vscode.commands.executeCommand<Array<{ name: string; maxContextLength?: number }>>('tinker.showModels', { quiet: true });
    assert.ok(Array.isArray(models), 'the command returns the model list');
    const random = models.find((m) => m.name === 'tinker-studio/random-gpt');
    assert.ok(random, `random-gpt is listed (got ${models.map((m) => m.name).join(', ')})`);
    assert.strictEqual(random.maxContextLength, 64);
  });

  test('rendered transcripts open as the Tinker Transcript language', async () => {
    await activateExtension();
    assert.ok((await vscode.languages.getLanguages()).includes('tinker-transcript'));
    const doc = await vscode.workspace.openTextDocument({
      language: 'tinker-transcript',
      content: '<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n<think>\nadd\n</think>\n\n4<|im_end|>',
    });
    assert.strictEqual(doc.languageId, 'tinker-transcript');
  });

  if (process.env.TINKER_FORCE_FAIL === '1') {
    test('deliberately failing test (TINKER_FORCE_FAIL=1) to check that failures fail the run', () => {
      assert.fail('forced failure');
    });
  }
});
