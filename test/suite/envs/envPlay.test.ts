// The environment-file editor in a real extension host, on examples/arith-retry copied into the
// workspace with its run spec: Play as the Model steps the env by hand through the panel's protocol
// (every message parsed at the edge, the real webview receiving them too): a wrong reply gets the
// env's "Wrong, try again." turn, a right one ends the episode with the env's reward; the command
// opens the panel on the env with its spec's model, renderer and dataset line; Dry Run Episode plays
// one episode with the spec's model on the local engine (asserting mechanics, never the model's
// answers); inline validation marks a missing method and a wrong return shape, and clears when fixed.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { Redactor } from '../../../src/core/config/redact';
import { Log } from '../../../src/vscode/common/log';
import { COMMAND } from '../../../src/vscode/common/commandIds';
import { envPlayPanels, openEnvPlay, type EnvPlayPanels } from '../../../src/vscode/envs/envPlayPanels';
import type { EnvPlayPanel } from '../../../src/vscode/envs/envPlayPanel';
import type { EnvPlayForm, EnvPlayView, ToWebview } from '../../../src/protocol/envPlayProtocol';
import { EXTENSION_ID, MemoryMemento, useLocalEngineAndRunsFolder, waitFor, workspaceRoot } from '../helpers';
import { TransportRecorder } from '../common/recordingTransport';

const LIMIT = 120_000;

suite('Environment files: Play as the Model, Dry Run Episode, inline validation', function () {
  this.timeout(LIMIT * 4);
  const suiteState = useLocalEngineAndRunsFolder('tinker-envs-');
  let api: TinkerStudioTestHandles;
  let dir: string;
  let envFile: string;

  suiteSetup(async () => {
    api = suiteState.api();
    const example = path.join(vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath, 'examples', 'arith-retry');
    dir = path.join(workspaceRoot(), 'env-tests');
    fs.cpSync(example, dir, { recursive: true });
    envFile = path.join(dir, 'arith_retry.env.py');
    await api.rewards.index.rescan();
    await waitFor('the index to know the spec naming the env', () => api.rewards.index.envSpecs(envFile).length > 0);
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('Play as the Model steps arith-retry: a wrong reply gets "Wrong, try again.", a right one ends the episode with the env\'s reward', async () => {
    const recorder = new TransportRecorder();
    const panels: EnvPlayPanels = envPlayPanels(
      {
        extensionUri: vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri,
        log: new Log(new Redactor(), 'Tinker (env play test)'),
        state: new MemoryMemento(),
        cacheDir: path.join(dir, 'cache'),
        envSpecs: (f) => api.rewards.index.envSpecs(f),
        envFiles: async () => [envFile],
        python: async () => 'python3',
        trusted: () => vscode.workspace.isTrusted,
      },
      recorder.factory,
    );
    try {
      const panel = await openEnvPlay(panels, { envFile });
      const t = recorder.of(panel.panel);
      // the real webview loads, says ready and gets the snapshot with the spec's defaults
      const snapshot = await waitFor('the snapshot', () => t.ofType<Extract<ToWebview, { type: 'snapshot' }>>('snapshot')[0], LIMIT);
      assert.strictEqual(snapshot.form.envFile, envFile);
      assert.strictEqual(snapshot.form.model, 'tinker-studio/arith-chat');
      assert.strictEqual(snapshot.form.renderer, 'chatml');
      assert.deepStrictEqual(snapshot.form.problem, { kind: 'line', file: path.join(dir, 'train.jsonl'), line: 1 });
      assert.ok(snapshot.envFiles.includes(envFile));
      // malformed messages are ignored at the edge
      await t.deliver({ type: 'reply', text: 42 });
      await t.deliver({ type: 'start', form: { ...snapshot.form, problem: { kind: 'line', file: '', line: 0 } } });
      assert.strictEqual(t.ofType('view').length, 0, 'no episode started from a malformed form');

      const views = () => t.ofType<Extract<ToWebview, { type: 'view' }>>('view').map((m) => m.view);
      const form: EnvPlayForm = { ...snapshot.form, problem: { kind: 'text', text: '{"x": 24, "y": 51}' } };
      await t.deliver({ type: 'start', form });
      const first = await waitFor('the first observation', () => views().find((v) => v.status === 'awaiting'), LIMIT);
      assert.strictEqual(first.player, 'you');
      assert.strictEqual(first.className, 'ArithRetry');
      assert.strictEqual(first.renderer, 'chatml');
      assert.deepStrictEqual(first.pending?.messages, [{ role: 'user', content: 'What is 24 + 51?' }]);

      await t.deliver({ type: 'reply', text: '70' });
      const second = await waitFor('the env\'s second turn', () => views().find((v) => v.status === 'awaiting' && v.turns.length === 1), LIMIT);
      assert.deepStrictEqual(second.pending?.messages, [{ role: 'user', content: 'Wrong, try again.' }]);
      assert.deepStrictEqual([second.turns[0]!.reply.role, second.turns[0]!.reply.content, second.turns[0]!.reward, second.turns[0]!.episode_done], ['assistant', '70', 0, false]);

      await t.deliver({ type: 'reply', text: '75' });
      const end = await waitFor('the episode to end', () => views().find((v) => v.status === 'done'), LIMIT);
      assert.strictEqual(end.stop, 'completed');
      assert.deepStrictEqual(end.turns.map((x) => x.reward), [0, 0.5]);
      assert.deepStrictEqual(end.turns[1]!.metrics, { first_try_correct: 0, second_try_correct: 1 });
      assert.strictEqual(end.total, 0.5);
      assert.deepStrictEqual(panel.currentView, end);

      // restart, right at once: reward 1; a reply when none is awaited is refused, not crashing the host
      await t.deliver({ type: 'start', form });
      await waitFor('a new episode', () => views().find((v) => v.status === 'awaiting' && v.id !== first.id), LIMIT);
      await t.deliver({ type: 'reply', text: '75' });
      const right = await waitFor('the restarted episode to end', () => views().filter((v) => v.status === 'done' && v.id !== end.id)[0], LIMIT);
      assert.deepStrictEqual(right.turns.map((x) => x.reward), [1]);
      await t.deliver({ type: 'reply', text: 'late' });
      assert.match(t.ofType<{ type: 'error'; message: string }>('error').at(-1)?.message ?? '', /no episode is waiting for a reply/);

      // stop while the env awaits a reply
      await t.deliver({ type: 'start', form: { ...form, problem: { kind: 'line', file: path.join(dir, 'train.jsonl'), line: 2 } } });
      const third = await waitFor('the third episode', () => views().find((v) => v.status === 'awaiting' && v.id !== first.id && v.id !== right.id), LIMIT);
      assert.deepStrictEqual(third.pending?.messages, [{ role: 'user', content: 'What is 54 + 98?' }]);
      await t.deliver({ type: 'stop' });
      await waitFor('the episode to stop', () => views().at(-1)?.status === 'cancelled', LIMIT);
    } finally {
      panels.dispose();
    }
  });

  test('the command opens Play as the Model on the env file with its spec\'s model and dataset line', async () => {
    assert.ok(await vscode.commands.executeCommand(COMMAND.playAsModel, vscode.Uri.file(envFile)));
    const panel: EnvPlayPanel = await waitFor('the panel', () => api.envs.panels.get(undefined), LIMIT);
    assert.strictEqual(panel.currentForm.envFile, envFile);
    assert.strictEqual(panel.currentForm.model, 'tinker-studio/arith-chat');
    assert.deepStrictEqual(panel.currentForm.problem, { kind: 'line', file: path.join(dir, 'train.jsonl'), line: 1 });
    panel.dispose();
  });

  test('Dry Run Episode plays one episode with the spec\'s model and shows the transcript with per-step rewards', async () => {
    const view = await vscode.commands.executeCommand<EnvPlayView | undefined>(COMMAND.dryRunEpisode, vscode.Uri.file(envFile), { line: 1 });
    assert.ok(view, 'the dry run returned its episode');
    assert.strictEqual(view.status, 'done', JSON.stringify(view.error));
    assert.strictEqual(view.player, 'model');
    assert.strictEqual(view.model, 'tinker-studio/arith-chat');
    assert.strictEqual(view.problem, '{"x":59,"y":29}');
    assert.ok(view.turns.length >= 1 && view.turns.length <= 2, `max_turns 2: ${view.turns.length} turns`);
    assert.deepStrictEqual(view.turns[0]!.new_messages, [{ role: 'user', content: 'What is 59 + 29?' }]);
    for (const t of view.turns) {
      assert.strictEqual(t.reply.role, 'assistant');
      assert.ok(t.ac_tokens > 0 && t.ob_tokens > 0);
    }
    // the rewards are the env's: 1 or 0.5 for a right answer, 0 otherwise; a wrong first reply gets the retry phrase
    if (view.turns.length === 2) assert.deepStrictEqual(view.turns[1]!.new_messages, [{ role: 'user', content: 'Wrong, try again.' }]);
    if (view.stop === 'completed') assert.ok([0, 0.5, 1].includes(view.turns.at(-1)!.reward));
    assert.strictEqual(view.total, view.turns.reduce((s, t) => s + t.reward, 0));
    const panel = api.envs.panels.get(undefined);
    assert.ok(panel, 'the transcript is shown in the panel');
    assert.deepStrictEqual(panel.currentView, view);
    panel.dispose();
  });

  test('inline validation: a missing step method and a wrong return shape are marked; fixed, they clear', async () => {
    const file = path.join(dir, 'broken.env.py');
    const uri = vscode.Uri.file(file);
    const diagnostics = (ok: (ds: vscode.Diagnostic[]) => boolean, what: string) =>
      waitFor(what, () => {
        const ds = vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'Tinker environment');
        return ok(ds) ? ds : undefined;
      }, LIMIT);
    fs.writeFileSync(file, 'class Broken:\n    def __init__(self, problem):\n        self.p = problem\n    def initial_observation(self):\n        return [{"role": "user", "content": "hi"}]\n');
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    const missing = await diagnostics((ds) => ds.some((d) => d.code === 'missing-function'), 'the missing method');
    assert.match(missing[0]!.message, /no environment class/);
    assert.deepStrictEqual([missing[0]!.range.start.line, missing[0]!.range.start.character, missing[0]!.range.end.character], [0, 6, 12]);
    // a step returning a string reward, as an unsaved edit
    const edit = new vscode.WorkspaceEdit();
    edit.insert(uri, new vscode.Position(5, 0), '    def step(self, message):\n        return {"reward": "1", "episode_done": True}\n');
    await vscode.workspace.applyEdit(edit);
    const shape = await diagnostics((ds) => ds.some((d) => d.code === 'wrong-shape'), 'the wrong shape');
    assert.match(shape[0]!.message, /Broken\.step returned a value of the wrong shape \(at reward\)/);
    assert.match(shape[0]!.message, /dataset line/);
    assert.strictEqual(shape[0]!.range.start.line, 5);
    const fix = new vscode.WorkspaceEdit();
    fix.replace(uri, new vscode.Range(6, 0, 7, 0), '        return {"reward": 1.0, "episode_done": True}\n');
    await vscode.workspace.applyEdit(fix);
    await diagnostics((ds) => ds.length === 0, 'the diagnostics to clear');
    const state = await waitFor('the validation state', () => api.envs.validator.state(uri)?.validation, LIMIT);
    assert.strictEqual(state.className, 'Broken');
  });
});
