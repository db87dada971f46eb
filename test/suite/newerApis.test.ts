// The APIs newer than the floor (src/vscode/common/newerApis.ts) are detected as the running host has
// them, and the rest of the extension works whether or not it has them. Run on the floor host
// (code-server 4.96, VS Code 1.96: no MCP server definitions) it shows the extension without them:
// the Runs view, Start GRPO Run on the local engine, and the playground sampling the run's checkpoint.
// The host runner names the VS Code version it started in TINKER_TEST_VSCODE_VERSION, so a run on the
// wrong host fails here instead of passing on a newer VS Code.
import * as assert from 'assert';
import * as path from 'path';
import * as vscode from 'vscode';
import { Redactor } from '../../src/core/config/redact';
import type { GrpoRunResult } from '../../src/core/runs/runEvents';
import { chatProviderApi, mcpApi, NEWER_API_SINCE } from '../../src/vscode/common/newerApis';
import type { ChatWithCheckpointResult, CopiedEndpoint } from '../../src/vscode/chat/chatCommands';
import { Log } from '../../src/vscode/common/log';
import { playgroundPanels } from '../../src/vscode/playground/playgroundPanels';
import { PlaygroundForm, PlaygroundSnapshot, RunView } from '../../src/protocol/playgroundProtocol';
import { writeTinySpec } from './runs/grpoFixtures';
import { EXTENSION_ID, MemoryMemento, useLocalEngineAndRunsFolder, waitFor } from './helpers';
import { TransportRecorder } from './common/recordingTransport';

const LIMIT = 240_000;

/** "1.96.4" ≥ "1.101"? by numeric parts */
function atLeast(version: string, since: string): boolean {
  const a = version.split(/[.-]/).map(Number);
  const b = since.split('.').map(Number);
  for (let i = 0; i < b.length; i++) {
    if ((a[i] ?? 0) !== b[i]) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return true;
}

suite('VS Code APIs newer than the floor: detected at run time, the rest works without them', function () {
  this.timeout(LIMIT);
  const suiteState = useLocalEngineAndRunsFolder('tinker-newer-apis-');
  let finished: GrpoRunResult | undefined;

  test('the MCP server definition API is found exactly when the host has it (VS Code 1.101 and later)', () => {
    const expected = process.env.TINKER_TEST_VSCODE_VERSION;
    if (expected) assert.strictEqual(vscode.version, expected, 'the suite runs in the VS Code the runner started');
    const onHost = typeof Reflect.get(vscode.lm, 'registerMcpServerDefinitionProvider') === 'function' && typeof Reflect.get(vscode, 'McpStdioServerDefinition') === 'function';
    assert.strictEqual(onHost, atLeast(vscode.version, NEWER_API_SINCE.mcp), `VS Code ${vscode.version} ${onHost ? 'has' : 'lacks'} the MCP API`);
    assert.strictEqual(mcpApi() !== undefined, onHost, 'mcpApi() reports what the host has');
    // the extension activated either way, with every contributed command registered
    assert.ok(vscode.extensions.getExtension(EXTENSION_ID)?.isActive, 'the extension is active');
  });

  test('the language-model chat provider API is found exactly when the host has it (1.104); without it "Chat with This Checkpoint" says why', async () => {
    const onHost = typeof Reflect.get(vscode.lm, 'registerLanguageModelChatProvider') === 'function';
    assert.strictEqual(onHost, atLeast(vscode.version, NEWER_API_SINCE.chatProvider), `VS Code ${vscode.version} ${onHost ? 'has' : 'lacks'} the chat provider API`);
    assert.strictEqual(chatProviderApi() !== undefined, onHost, 'chatProviderApi() reports what the host has');
    const api = suiteState.api();
    assert.strictEqual(api.chatModels.registered, onHost, 'the tinker vendor is registered exactly where the API is');
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('tinker.chatWithCheckpoint') && commands.includes('tinker.copyOpenAiEndpoint'), 'the commands exist on every host');
    if (!onHost) {
      const r = await vscode.commands.executeCommand<ChatWithCheckpointResult>('tinker.chatWithCheckpoint');
      assert.ok(r && !r.available, 'unavailable here');
      assert.match(r.reason, new RegExp(`needs VS Code ${NEWER_API_SINCE.chatProvider.replace('.', '\\.')} or later.*this is VS Code ${vscode.version.replace(/\./g, '\\.')}`));
      assert.deepStrictEqual(api.chatModels.pinned(), [], 'nothing pinned');
    }
  });

  test('Start GRPO Run trains on the local engine and the Runs view shows the run', async () => {
    const api = suiteState.api();
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('tinker.startGrpoRun') && commands.includes('tinker.openPlayground'), 'the commands are registered');
    finished = await vscode.commands.executeCommand<GrpoRunResult>('tinker.startGrpoRun', vscode.Uri.file(writeTinySpec({ name: 'floor' })));
    assert.ok(finished, 'the command returns the run result');
    assert.strictEqual(finished.status, 'completed', finished.error);
    assert.strictEqual(path.dirname(finished.runDir), suiteState.runsDir());
    const run = finished;
    const row = await waitFor('the run in the Runs view', async () => (await api.runsTree.localRuns()).find((r) => r.run.dir === run.runDir), LIMIT);
    assert.strictEqual(row.status, 'completed');
    assert.match(String(api.runsTree.getTreeItem(row).description), /^iteration 1 · reward \d\.\d{3} · completed$/);
  });

  test('the playground opens from the palette and samples the run’s final checkpoint against its base model', async () => {
    const api = suiteState.api();
    assert.strictEqual(await vscode.commands.executeCommand('tinker.openPlayground'), true);
    assert.strictEqual(api.playground.all().length, 1, 'the palette command opened the playground');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');

    assert.ok(finished, 'the run of the previous test');
    const run = finished;
    const sampler = await waitFor('the run’s final sampler checkpoint', async () => {
      const listed = (await api.runs.list()).find((r) => r.dir === run.runDir);
      return listed?.checkpoints.find((c) => c.name === 'final')?.sampler_path;
    }, LIMIT);
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const recorder = new TransportRecorder();
    const log = new Log(new Redactor(), 'Tinker (newer APIs test)');
    // the window's own connection, so side B reaches the checkpoint the run saved on its engine
    const panels = playgroundPanels(
      {
        extensionUri: ext.extensionUri,
        log,
        service: () => api.connection.get(),
        cacheDir: path.join(suiteState.runsDir(), '.cache'),
        state: new MemoryMemento(),
        runs: async () => [],
        checkpoints: async () => [{ label: 'floor · final', path: sampler }],
        rewardFiles: async () => [],
        python: async () => 'python3',
        trusted: () => vscode.workspace.isTrusted,
      },
      recorder.factory,
    );
    try {
      const panel = await panels.open({ A: { kind: 'base', model: 'tinker-studio/arith-gpt' }, B: { kind: 'checkpoint', path: sampler }, messages: [{ role: 'user', content: 'What is 2 + 3?' }] });
      const transport = recorder.of(panel.panel);
      // the real webview said ready: the host answered with its snapshot
      const snapshot = await waitFor('the snapshot', () => transport.sent.map((m) => PlaygroundSnapshot.safeParse(m)).find((r) => r.success)?.data, LIMIT);
      const form: PlaygroundForm = { ...snapshot.form, params: { temperature: 1, topP: 1, topK: -1, maxTokens: 4, n: 2, seed: 7 } };
      await transport.deliver({ type: 'run', form });
      const done = transport.ofType<{ type: 'runDone'; run: unknown }>('runDone');
      assert.strictEqual(done.length, 1, 'the run ended');
      const view = RunView.parse(done[0]!.run);
      assert.strictEqual(view.status, 'done');
      for (const side of ['A', 'B'] as const) {
        assert.deepStrictEqual(view.sides[side]?.errors, [], `side ${side} has no errors`);
        assert.deepStrictEqual(view.sides[side]?.samples.map((s) => s.index), [0, 1], `side ${side} has two samples`);
      }
    } finally {
      panels.dispose();
      log.dispose();
    }
  });

  test('Copy OpenAI-Compatible Endpoint works on this host: the copied URL, key and model answer a chat request', async () => {
    assert.ok(finished, 'the run of the earlier test');
    const run = finished;
    const api = suiteState.api();
    const sampler = (await api.runs.list()).find((r) => r.dir === run.runDir)?.checkpoints.find((c) => c.name === 'final')?.sampler_path;
    assert.ok(sampler, 'the run’s final sampler checkpoint');
    const copied = await vscode.commands.executeCommand<CopiedEndpoint>('tinker.copyOpenAiEndpoint', sampler, undefined, { copyKey: true });
    assert.ok(copied?.keyCopied && copied.model === sampler, JSON.stringify(copied));
    const clip = await vscode.env.clipboard.readText();
    const base = /^OPENAI_BASE_URL=(.+)$/m.exec(clip)?.[1];
    const key = /^OPENAI_API_KEY=(.+)$/m.exec(clip)?.[1];
    assert.ok(base && key, 'the URL and the key were copied');
    const res = await fetch(`${base}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: sampler, messages: [{ role: 'user', content: 'What is 2 + 3?' }], max_tokens: 4, seed: 1 }),
    });
    assert.strictEqual(res.status, 200, await res.clone().text());
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
    assert.strictEqual(typeof body.choices[0]?.message.content, 'string');
    await vscode.env.clipboard.writeText('');
  });
});
