// The model registry in a real extension host: the Models view over the workspace's tinker-models.json
// (grouped by status, refreshed by its file watcher when another process writes the file), a version's
// model card (fields, the suite metric across versions with intervals, the gate's paired verdict, a
// zod-checked action from the webview), and a promotion through the command on crafted suite results:
// a worse candidate refused with every reason and the paired numbers in one message, "Promote
// Anyway…" asking for a written reason that the registry keeps, and a better one promoted by the gate.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { Redactor } from '../../../src/core/config/redact';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { Log } from '../../../src/vscode/common/log';
import type { ModelNode } from '../../../src/vscode/models/modelsTree';
import { modelCardPanels } from '../../../src/vscode/models/modelCardPanels';
import { ModelRegistryFile } from '../../../src/vscode/models/registryFile';
import { gateView } from '../../../src/vscode/models/modelCard';
import { ModelCardSnapshot } from '../../../src/protocol/modelCardProtocol';
import type { PromoteResult } from '../../../src/vscode/models/modelCommands';
import { activateExtension, EXTENSION_ID, waitFor, workspaceRoot } from '../helpers';
import { TransportRecorder } from '../common/recordingTransport';
import { craftRuns, FIXTURE_DIR } from './modelFixture';

suite('Models view and promotion', function () {
  this.timeout(120_000);
  let api: TinkerStudioTestHandles;
  let log: Log;
  let file: string;
  let runs: Awaited<ReturnType<typeof craftRuns>>['runs'];

  const cleanUp = () => {
    const root = workspaceRoot();
    for (const f of ['tinker-models.json', 'tinker-models.json.lock', 'MODELS.md']) fs.rmSync(path.join(root, f), { force: true });
    fs.rmSync(path.join(root, FIXTURE_DIR), { recursive: true, force: true });
  };

  suiteSetup(async () => {
    api = await activateExtension();
    log = new Log(new Redactor(), 'Tinker (test)');
    cleanUp();
    file = path.join(workspaceRoot(), 'tinker-models.json');
    // arith@v1 (the demo run) registered and promoted by the core, as the CLI would; the rest through the commands
    const fixture = await craftRuns(workspaceRoot());
    runs = fixture.runs;
    const { registerFromRun, setGateSuite } = await import('../../../src/core/models/lifecycle');
    const { promote } = await import('../../../src/core/models/promotion');
    await setGateSuite(file, fixture.suiteFile);
    await registerFromRun(file, { name: 'arith', runDir: runs.demo });
    await promote(file, 'arith@v1', { resamples: 500, seed: 1 });
  });

  suiteTeardown(() => {
    log.dispose();
    cleanUp();
  });

  teardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  const groups = async () => {
    const out: Record<string, string[]> = {};
    for (const g of await api.modelsTree.getChildren()) {
      assert.strictEqual(g.kind, 'status');
      out[g.kind === 'status' ? g.status : ''] = (await api.modelsTree.getChildren(g)).map((n) => (n.kind === 'version' ? n.version.id : n.kind));
    }
    return out;
  };

  const row = async (id: string): Promise<ModelNode> => {
    for (const g of await api.modelsTree.getChildren()) for (const n of await api.modelsTree.getChildren(g)) if (n.kind === 'version' && n.version.id === id) return n;
    throw new Error(`${id} is not in the Models view`);
  };

  test('Register from the Runs view (the run\'s final checkpoint, the name asked) and Run Suite record new candidates', async () => {
    const asked: vscode.InputBoxOptions[] = [];
    const ui = api.ui.override({
      showInputBox: async (o) => {
        asked.push(o);
        return 'arith';
      },
    });
    try {
      for (const dir of [runs.collapse, runs.longer]) assert.ok(await vscode.commands.executeCommand('tinker.models.registerRun', { kind: 'run', run: { dir, name: path.basename(dir) } }));
    } finally {
      ui.dispose();
    }
    assert.strictEqual(asked.length, 2);
    assert.strictEqual(asked[0]!.value, 'arith', 'the one model name of the registry is offered');
    assert.ok(asked[0]!.validateInput!('no spaces please'), 'a name that is not one is refused');
    const { readRegistry } = await import('../../../src/core/models/store');
    const v2 = (await readRegistry(file)).versions.find((v) => v.id === 'arith@v2')!;
    assert.strictEqual(v2.sampler_path, 'tinker://collapse/sampler_weights/final');
    assert.deepStrictEqual(v2.recipe.map((r) => [r.kind, r.learning_rate, r.steps]), [['sft', 0.0005, 20], ['grpo', 0.5, 8]]);
    // the stored results are current: Run Suite records their figures without sampling again
    for (const id of ['arith@v2', 'arith@v3']) await vscode.commands.executeCommand('tinker.models.runSuite', { id });
    const after = await readRegistry(file);
    assert.deepStrictEqual(after.versions.map((v) => [v.id, v.suite_results.at(-1)?.entries[0]?.estimate.value]), [['arith@v1', 0.6], ['arith@v2', 0.2], ['arith@v3', 0.85]]);
  });

  test('the view groups the versions by status; a row says its status, base model and suite figure, and opens its card', async () => {
    assert.deepStrictEqual(await groups(), { production: ['arith@v1'], candidate: ['arith@v3', 'arith@v2'] });
    const v2 = await row('arith@v2');
    const item = api.modelsTree.getTreeItem(v2);
    assert.strictEqual(item.contextValue, 'tinker.modelVersion candidate sampler');
    assert.match(String(item.description), /^tinker-studio\/arith-gpt · pass@1 0\.2 \[0\.0\d+, 0\.3\d+\]$/);
    assert.strictEqual(item.command?.command, 'tinker.models.openCard');
    await vscode.commands.executeCommand(item.command.command, ...(item.command.arguments ?? []));
    const card = await waitFor('the card of arith@v2', () => api.modelCards.get({ id: 'arith@v2', registryFile: file }));
    assert.ok(/script-src 'nonce-[^']+'/.test(card.panel.webview.html), 'scripts by nonce');
    assert.ok(/default-src 'none'/.test(card.panel.webview.html), 'nothing else by default');
  });

  test('the card: fields, the metric across versions with intervals, the gate refusing with the paired numbers; actions from the webview are checked', async () => {
    const recorder = new TransportRecorder();
    const extensionUri = vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri;
    const registry = new ModelRegistryFile(file);
    const panels = modelCardPanels({ extensionUri, log, registry, gate: gateView }, recorder.factory);
    try {
      const panel = await panels.open({ id: 'arith@v2', registryFile: file });
      const transport = recorder.of(panel.panel);
      const snap = await waitFor('the snapshot', () => transport.sent.map((m) => ModelCardSnapshot.safeParse(m)).find((r) => r.success)?.data, 30_000);
      assert.strictEqual(snap.id, 'arith@v2');
      assert.strictEqual(snap.status, 'candidate');
      assert.deepStrictEqual(snap.fields.slice(0, 5).map((f) => f.label), ['Sampler path', 'State path', 'Base model', 'Renderer', 'LoRA rank']);
      assert.deepStrictEqual(snap.recipe.map((r) => [r.kind, r.run, r.learning_rate, r.steps]), [
        ['sft', `${FIXTURE_DIR}/runs/sft-warmup`, 0.0005, 20],
        ['grpo', `${FIXTURE_DIR}/runs/collapse`, 0.5, 8],
      ]);
      assert.deepStrictEqual(snap.data.map((d) => [d.file, d.lines]), [[`${FIXTURE_DIR}/chats.jsonl`, 12], [`${FIXTURE_DIR}/train.jsonl`, 30]]);
      assert.deepStrictEqual(snap.history.map((h) => h.status), ['candidate']);
      assert.strictEqual(snap.fields.find((f) => f.label === 'LoRA rank')?.value, '8');
      const m = snap.metrics[0]!;
      assert.strictEqual(m.entry, 'holdout');
      assert.deepStrictEqual(m.points.map((p) => [p.id, p.status, p.estimate.value, p.n, p.current]), [
        ['arith@v1', 'production', 0.6, 40, false],
        ['arith@v2', 'candidate', 0.2, 40, true],
        ['arith@v3', 'candidate', 0.85, 40, false],
      ]);
      assert.ok(m.points.every((p) => p.estimate.lo !== undefined && p.estimate.hi !== undefined && p.estimate.lo < p.estimate.value && p.estimate.value < p.estimate.hi));
      assert.ok(snap.gate);
      assert.strictEqual(snap.gate.against, 'arith@v1');
      assert.strictEqual(snap.gate.passed, false);
      assert.match(snap.gate.reasons[0]!.text, /holdout: pass@1 0\.2 .* vs production 0\.6 .*paired difference -0\.4 \[.*\] over 40 items .*lower bound .* < −0\.02/);
      assert.match(snap.markdown, /^### arith@v2 — candidate/);
      assert.deepStrictEqual(snap.can, { promote: true, retire: true, playground: true, clearTtl: false, compare: true });
      // a malformed message is ignored; a known action runs its command on this version
      await transport.deliver({ type: 'action', action: 'rm -rf' });
      assert.strictEqual(panel.lastAction, undefined);
      await transport.deliver({ type: 'action', action: 'copyPath' });
      assert.strictEqual(panel.lastAction, 'copyPath');
      assert.strictEqual(await vscode.env.clipboard.readText(), 'tinker://collapse/sampler_weights/final');
    } finally {
      panels.dispose();
      registry.dispose();
    }
  });

  test('another process writing the registry refreshes the view (its file watcher)', async () => {
    const { setStatus } = await import('../../../src/core/models/lifecycle');
    let refreshed = 0;
    const sub = api.modelsTree.onDidRefresh(() => refreshed++);
    try {
      // watchers start asynchronously: rewrite the file (same content) until the first event arrives
      const text = fs.readFileSync(file, 'utf8');
      await waitFor('the registry watcher', () => {
        if (refreshed > 0) return true;
        fs.writeFileSync(file, text);
        return undefined;
      }, 30_000);
      const before = refreshed;
      await setStatus(file, 'arith@v3', 'staging', { reason: 'from the test, as the CLI would' });
      await waitFor('the view to refresh', () => (refreshed > before ? true : undefined), 30_000);
      assert.deepStrictEqual(await groups(), { production: ['arith@v1'], staging: ['arith@v3'], candidate: ['arith@v2'] });
    } finally {
      sub.dispose();
    }
  });

  test('Promote: a worse candidate is refused with every reason in one message; Promote Anyway needs a written reason, which is kept', async () => {
    const warnings: Array<{ message: string; items: string[] }> = [];
    const inputs: vscode.InputBoxOptions[] = [];
    let answer: string | undefined;
    const ui = api.ui.override({
      showWarningMessage: async (message, ...items) => {
        warnings.push({ message, items });
        return answer;
      },
      showInputBox: async (o) => {
        inputs.push(o);
        return 'the demo needs it today; v3 follows tomorrow';
      },
    });
    try {
      const v2 = await row('arith@v2');
      // dismissed: nothing changes
      const refused = await vscode.commands.executeCommand<PromoteResult>('tinker.models.promote', v2, { to: 'production' });
      assert.strictEqual(refused?.outcome, 'refused');
      assert.strictEqual(warnings.length, 1);
      assert.deepStrictEqual(warnings[0]!.items, ['Promote Anyway…']);
      assert.match(warnings[0]!.message, /^arith@v2 was not promoted to production against arith@v1 on suite arith \(version [0-9a-f]{12}\): \(1\) holdout: pass@1 0\.2 .*paired difference -0\.4 .* over 40 items/);
      assert.strictEqual(inputs.length, 0);
      assert.deepStrictEqual((await groups()).production, ['arith@v1']);

      // Promote Anyway: the input box refuses an empty reason, and the reason is kept
      answer = 'Promote Anyway…';
      const anyway = await vscode.commands.executeCommand<PromoteResult>('tinker.models.promote', { id: 'arith@v2' }, { to: 'production' });
      assert.strictEqual(anyway?.outcome, 'anyway');
      assert.strictEqual(inputs.length, 1);
      const validate = inputs[0]!.validateInput!;
      assert.ok(validate('   '), 'an empty reason is refused');
      assert.strictEqual(validate('because'), undefined);
      const reg = JSON.parse(fs.readFileSync(file, 'utf8'));
      const v2Now = reg.versions.find((v: { id: string }) => v.id === 'arith@v2');
      assert.strictEqual(v2Now.status, 'production');
      const last = v2Now.history.at(-1);
      assert.strictEqual(last.anyway, true);
      assert.strictEqual(last.reason, 'the demo needs it today; v3 follows tomorrow');
      assert.match(last.gate.join('\n'), /paired difference -0\.4/);
      assert.strictEqual(reg.versions.find((v: { id: string }) => v.id === 'arith@v1').status, 'retired');
      assert.match(fs.readFileSync(path.join(path.dirname(file), 'MODELS.md'), 'utf8'), /the demo needs it today/);

      // a better one passes the gate without a question
      const before = warnings.length;
      const promoted = await vscode.commands.executeCommand<PromoteResult>('tinker.models.promote', await row('arith@v3'), { to: 'production' });
      assert.strictEqual(promoted?.outcome, 'promoted', promoted?.message);
      assert.strictEqual(warnings.length, before);
      await waitFor('the view to show arith@v3 in production', async () => ((await groups()).production?.[0] === 'arith@v3' ? true : undefined));
      assert.deepStrictEqual(await groups(), { production: ['arith@v3'], retired: ['arith@v2', 'arith@v1'] });
    } finally {
      ui.dispose();
    }
  });

  test('Register from the Checkpoints view: a run\'s checkpoint becomes a candidate with its run\'s facts', async () => {
    const runNode = await waitFor('the fixture run with checkpoints', async () => (await api.checkpointsTree.getChildren()).find((n) => n.kind === 'run' && n.run.name === 'arith-demo'));
    const [ckpt] = await api.checkpointsTree.getChildren(runNode);
    assert.ok(ckpt && ckpt.kind === 'checkpoint');
    assert.strictEqual(await vscode.commands.executeCommand('tinker.models.registerCheckpoint', ckpt, { name: 'demo-fixture' }), 'demo-fixture@v1');
    const { readRegistry } = await import('../../../src/core/models/store');
    const v = (await readRegistry(file)).versions.find((x) => x.id === 'demo-fixture@v1')!;
    assert.deepStrictEqual([v.status, v.sampler_path, v.state_path, v.base_model, v.lora_rank], ['candidate', 'tinker://run-1/sampler_weights/000002', 'tinker://run-1/weights/000002', 'tinker-studio/arith-gpt', 8]);
    assert.deepStrictEqual(v.recipe.map((r) => [r.learning_rate, r.steps]), [[0.0005, 3]]);
    await waitFor('the view to show it', async () => ((await groups()).candidate?.includes('demo-fixture@v1') ? true : undefined));
    // a row that is not a checkpoint is refused with what to select
    assert.strictEqual(await vscode.commands.executeCommand('tinker.models.registerCheckpoint', runNode, { name: 'demo-fixture' }), undefined);
  });
});
