// Checkpoint management in the Checkpoints view against the embedded engine: rows decorated with the
// server's facts, every action (publish/unpublish, TTL set/clear, weights info, download, delete with
// multi-select), an expired checkpoint's error that leaves the tree usable, Start SFT from here, and
// paging of the server runs ("Load more").
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { DownloadResult } from '../../../src/core/checkpoints/download';
import type { WeightsSummary } from '../../../src/core/checkpoints/manage';
import type { SftRunResult } from '../../../src/core/runs/runEvents';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import type { ActionReport } from '../../../src/vscode/checkpoints/checkpointCommands';
import type { CheckpointNode } from '../../../src/vscode/checkpoints/checkpointsTree';
import type { RunsNode } from '../../../src/vscode/runs/runsTree';
import { useLocalEngineAndRunsFolder, waitFor } from '../helpers';

type PathNode = Extract<CheckpointNode, { kind: 'path' }>;

function writeChats(dir: string): string {
  const chats = Array.from({ length: 16 }, (_, i) => JSON.stringify({ messages: [{ role: 'user', content: `What is ${i} + 2?` }, { role: 'assistant', content: String(i + 2) }] }));
  const file = path.join(dir, 'chats.jsonl');
  fs.writeFileSync(file, chats.join('\n') + '\n');
  return file;
}

suite('Checkpoint management in the Checkpoints view', function () {
  this.timeout(240_000);
  const suiteState = useLocalEngineAndRunsFolder('tinker-ckpt-view-');
  let api: TinkerStudioTestHandles;
  let runDir: string;
  let specDir: string;

  /** The path rows of the run's checkpoints, freshly decorated by the server. */
  async function pathRows(dir = runDir): Promise<PathNode[]> {
    const run = await waitFor('the run in the Checkpoints view', async () => (await api.checkpointsTree.getChildren()).find((n) => n.kind === 'run' && n.run.dir === dir));
    const out: PathNode[] = [];
    for (const c of await api.checkpointsTree.getChildren(run)) for (const p of await api.checkpointsTree.getChildren(c)) if (p.kind === 'path') out.push(p);
    return out;
  }
  const row = async (tinkerPath: string) => {
    const r = (await pathRows()).find((p) => p.tinkerPath === tinkerPath);
    assert.ok(r, `row for ${tinkerPath}`);
    return { node: r, item: api.checkpointsTree.getTreeItem(r) };
  };

  suiteSetup(async () => {
    api = suiteState.api();
    specDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-ckpt-spec-'));
    writeChats(specDir);
    const spec = { name: 'ckpt-source', backend: 'local', model: 'tinker-studio/arith-gpt', renderer: 'chatml', lora_rank: 4, learning_rate: 0.004, batch_size: 4, max_steps: 2, eval_every: 0, save_every: 1, dataset: { path: 'chats.jsonl' } };
    const file = path.join(specDir, 'ckpt-source.sft.json');
    fs.writeFileSync(file, JSON.stringify(spec, null, 2));
    const r = await vscode.commands.executeCommand<SftRunResult>('tinker.startSftRun', vscode.Uri.file(file));
    assert.ok(r && r.status === 'completed', r?.error);
    runDir = r.runDir;
  });
  suiteTeardown(() => fs.rmSync(specDir, { recursive: true, force: true }));

  test('rows show state vs sampler, size and the actions that work for them', async () => {
    const rows = await pathRows();
    assert.ok(rows.some((r) => r.which === 'state') && rows.some((r) => r.which === 'sampler'));
    for (const r of rows) {
      assert.ok(typeof r.server === 'object', `the server knows ${r.tinkerPath}`);
      const item = api.checkpointsTree.getTreeItem(r);
      assert.match(String(item.contextValue), new RegExp(`^tinker\\.checkpointPath ${r.which} private remote local`));
      assert.match(String(item.description), /^\d+(\.\d)? (B|KiB|MiB) · tinker:\/\//, 'the size the server reports, then the path');
    }
  });

  test("a row's tooltip estimates a month of its storage from its size, at the tinker.prices rate", async () => {
    const tooltip = async () => {
      const r = (await pathRows()).find((p) => p.which === 'state')!;
      const size = typeof r.server === 'object' ? r.server.sizeBytes : undefined;
      assert.ok(size !== undefined && size > 0, 'the engine reports the size');
      return { size, text: (api.checkpointsTree.getTreeItem(r).tooltip as vscode.MarkdownString).value };
    };
    const settings = vscode.workspace.getConfiguration('tinker');
    try {
      // a rate high enough that a small LoRA checkpoint costs cents
      await settings.update('prices', { taken: '2026-11-28', storage_usd_per_gb_month: 100000 }, vscode.ConfigurationTarget.Global);
      const { size, text } = await tooltip();
      assert.ok(text.includes(`about $${((size / 1e9) * 100000).toFixed(2)} per month`), text);
      assert.match(text, /at \$100000\.00 per GB-month, prices taken 2026-11-28/);
      // a setting that is not a price table: the shipped rate (a run refuses it, naming the field)
      await settings.update('prices', { storage_usd_per_gb_month: 'cheap' }, vscode.ConfigurationTarget.Global);
      assert.match((await tooltip()).text, /at \$0\.10 per GB-month, prices taken \d{4}-\d{2}-\d{2}/);
    } finally {
      await settings.update('prices', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  test('publish and unpublish, set and clear a TTL ("expires in 2 days")', async () => {
    const p = (await pathRows()).find((r) => r.which === 'sampler')!;
    const pub = await vscode.commands.executeCommand<ActionReport[]>('tinker.checkpoints.publish', p, [p]);
    assert.deepStrictEqual(pub, [{ tinkerPath: p.tinkerPath, ok: true }]);
    let { item, node } = await row(p.tinkerPath);
    assert.match(String(item.contextValue), / public /);
    assert.match(String(item.description), /public/);
    await vscode.commands.executeCommand('tinker.checkpoints.unpublish', node, [node]);
    ({ item, node } = await row(p.tinkerPath));
    assert.match(String(item.contextValue), / private /);

    const ttl = await vscode.commands.executeCommand<ActionReport[]>('tinker.checkpoints.setTtl', node, [node], { ttl: '2d' });
    assert.deepStrictEqual(ttl?.map((r) => r.ok), [true]);
    ({ item, node } = await row(p.tinkerPath));
    assert.match(String(item.description), /expires in 2 days/);
    assert.match(String(item.contextValue), /\bexpiring\b/);
    await vscode.commands.executeCommand('tinker.checkpoints.clearTtl', node, [node]);
    ({ item } = await row(p.tinkerPath));
    assert.doesNotMatch(String(item.description), /expires/);
    assert.doesNotMatch(String(item.contextValue), /\bexpiring\b/);
  });

  test('shows weights info and downloads an archive unpacked into a folder', async () => {
    const state = (await pathRows()).find((r) => r.which === 'state')!;
    const w = await vscode.commands.executeCommand<WeightsSummary>('tinker.checkpoints.weightsInfo', state, [state]);
    assert.deepStrictEqual([w?.baseModel, w?.loraRank], ['tinker-studio/arith-gpt', 4]);
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-ckpt-dl-'));
    try {
      const d = await vscode.commands.executeCommand<DownloadResult>('tinker.checkpoints.download', state, [state], { folder });
      assert.ok(d, 'the download returns where it went');
      assert.deepStrictEqual([...d.files].sort(), ['adapter_config.json', 'adapter_model.tsstate', 'checkpoint_complete']);
      assert.deepStrictEqual(fs.readdirSync(folder), [path.basename(d.dir)], 'only the unpacked folder, no temp files');
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  test('Start SFT from here writes a spec with load_checkpoint_path and trains from it; the server runs page with Load more', async () => {
    const state = (await pathRows()).find((r) => r.which === 'state')!;
    const specFile = path.join(specDir, 'from-ckpt.sft.json');
    const r = await vscode.commands.executeCommand<SftRunResult>('tinker.checkpoints.startSft', state, [state], {
      guided: { dataset: path.join(specDir, 'chats.jsonl'), validation: 'none', batchSize: 4, maxSteps: 1, specFile },
    });
    assert.ok(r && r.status === 'completed', r?.error);
    const spec = JSON.parse(fs.readFileSync(specFile, 'utf8')) as { model: string; load_checkpoint_path: string };
    assert.deepStrictEqual([spec.model, spec.load_checkpoint_path], ['tinker-studio/arith-gpt', state.tinkerPath]);

    const tree = api.checkpointsTree;
    const size = tree.pageSize;
    try {
      tree.pageSize = 1;
      tree.refresh();
      const root = (await tree.getChildren()).find((n) => n.kind === 'serverRoot')!;
      const first = await tree.getChildren(root);
      assert.deepStrictEqual(first.map((n) => n.kind), ['serverRun', 'loadMore']);
      assert.strictEqual(tree.getTreeItem(first[1]!).command?.command, 'tinker.checkpoints.loadMore');
      await vscode.commands.executeCommand('tinker.checkpoints.loadMore');
      const second = await tree.getChildren(root);
      assert.ok(second.filter((n) => n.kind === 'serverRun').length === 2, 'the next page is appended');
      const serverRun = second[0]!;
      const ckpts = await tree.getChildren(serverRun);
      assert.ok(ckpts.length > 0 && ckpts.every((c) => c.kind === 'serverCheckpoint' || c.kind === 'message'));
    } finally {
      tree.pageSize = size;
      tree.refresh();
    }
  });

  test('the Runs view lists the server runs from the Checkpoints view’s listing: the same pages, the same Load more', async () => {
    const tree = api.checkpointsTree;
    const runsTree = api.runsTree;
    assert.strictEqual(runsTree.serverRuns, tree.serverRuns, 'one listing for both views');
    const size = tree.pageSize;
    const ids = (nodes: ReadonlyArray<RunsNode | CheckpointNode>) => nodes.map((n) => (n.kind === 'serverRun' ? n.run.training_run_id : n.kind));
    try {
      tree.pageSize = 1;
      runsTree.refreshServer();
      const server = await waitFor('the Server node of the Runs view', async () => (await runsTree.getChildren()).find((n) => n.kind === 'server'));
      const first = await runsTree.getChildren(server);
      assert.deepStrictEqual(first.map((n) => n.kind), ['serverRun', 'loadMore']);
      assert.strictEqual(runsTree.getTreeItem(first[1]!).command?.command, 'tinker.checkpoints.loadMore');
      await vscode.commands.executeCommand('tinker.checkpoints.loadMore');
      const root = (await tree.getChildren()).find((n) => n.kind === 'serverRoot')!;
      const inRuns = ids(await runsTree.getChildren(server));
      assert.strictEqual(inRuns.filter((k) => k !== 'loadMore').length, 2, 'the next page shows in the Runs view too');
      assert.deepStrictEqual(inRuns, ids(await tree.getChildren(root)));
    } finally {
      tree.pageSize = size;
      tree.refresh();
    }
  });

  test('deletes a multi-selection after one confirmation, and says which failed', async () => {
    const rows = (await pathRows()).filter((r) => r.which === 'sampler');
    assert.ok(rows.length >= 2, 'two sampler checkpoints to delete');
    const picked = rows.slice(0, 2);
    const report = await vscode.commands.executeCommand<ActionReport[]>('tinker.checkpoints.delete', picked[0], picked, { confirm: true });
    assert.deepStrictEqual(report?.map((r) => [r.tinkerPath, r.ok]), picked.map((p) => [p.tinkerPath, true]));
    for (const p of picked) {
      const { item } = await row(p.tinkerPath);
      assert.strictEqual(item.description, `not on the server · ${p.tinkerPath}`);
      assert.doesNotMatch(String(item.contextValue), /\bremote\b/, 'no server actions on a deleted checkpoint');
    }
    // deleting them again fails item by item with "not found", without throwing
    const again = await vscode.commands.executeCommand<ActionReport[]>('tinker.checkpoints.delete', picked[0], picked, { confirm: true });
    assert.deepStrictEqual(again?.map((r) => r.ok), [false, false]);
    assert.match(again![0]!.error!, /the server has no such checkpoint/);
  });

  test('an expired checkpoint gives a clear error and the tree stays usable', async () => {
    const state = (await pathRows()).find((r) => r.which === 'state')!;
    await vscode.commands.executeCommand('tinker.checkpoints.setTtl', state, [state], { ttl: '4s' });
    const { node } = await row(state.tinkerPath);
    assert.ok(typeof node.server === 'object' && node.server.expiresAt, 'the row knows the expiry');
    const expiresAt = node.server.expiresAt;
    await waitFor('the TTL to pass', () => Date.now() > expiresAt.getTime() + 200, 30_000);
    // any listing makes the engine drop expired checkpoints
    await waitFor('the engine to drop it', async () => {
      api.checkpointsTree.refresh();
      return (await row(state.tinkerPath)).node.server === 'missing';
    });
    const report = await vscode.commands.executeCommand<ActionReport[]>('tinker.checkpoints.publish', node, [node]);
    assert.strictEqual(report?.[0]?.ok, false);
    assert.match(report![0]!.error!, /expired at .* and the server deleted it/);
    assert.ok((await pathRows()).length > 0, 'the tree still lists the run');
  });
});
