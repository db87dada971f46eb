// The Runs view lists an eval results folder of the workspace as its own row: label the spec's name,
// description "3 targets · 12 problems · n=2", a tooltip with each target against the baseline; a
// click and the context menu (the row itself as the argument) open the Eval Results panel; the row
// follows summary.json (a new target) and goes away with the folder.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import type { RunsNode } from '../../../src/vscode/runs/runsTree';
import type { EvalResultsNode } from '../../../src/vscode/evals/evalTreeItems';
import { activateExtension, waitFor, workspaceRoot } from '../helpers';
import { writeEvalResults } from './evalFixture';
import { readEvalResults } from '../../../src/core/evals/results';
import { baselineComparisonLines } from '../../../src/core/evals/table';
import { escapeMarkdown } from '../../../src/core/text/markdown';

type SectionNode = Extract<RunsNode, { kind: 'section' }>;

suite('eval results in the Runs view', function () {
  this.timeout(200_000);
  let api: TinkerStudioTestHandles;
  let root: string;

  suiteSetup(async () => {
    api = await activateExtension();
  });
  setup(() => {
    root = fs.mkdtempSync(path.join(workspaceRoot(), 'evaltree-'));
  });
  teardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    fs.rmSync(root, { recursive: true, force: true });
  });

  const rowOf = async (dir: string) =>
    (await api.runsTree.getChildren()).find((n): n is SectionNode => n.kind === 'section' && (n.node as EvalResultsNode).evalResults?.dir === dir);

  test('a results folder is a row with its size and the baseline comparison; click and context menu open the panel', async () => {
    fs.writeFileSync(path.join(root, 'holdout.eval.json'), '{}\n');
    const dir = writeEvalResults(path.join(root, 'evals', 'holdout'), { checkpoints: 2, problems: 12, n: 2 });
    const row = await waitFor('the eval row', () => rowOf(dir), 60_000);
    const item = api.runsTree.getTreeItem(row);
    assert.strictEqual(item.label, 'holdout');
    assert.strictEqual(item.description, '3 targets · 12 problems · n=2');
    assert.strictEqual(item.contextValue, 'tinker.evalResults');
    const tip = (item.tooltip as vscode.MarkdownString).value;
    const lines = baselineComparisonLines(readEvalResults(dir).summary);
    assert.deepStrictEqual(lines.map((l) => l.slice(0, l.indexOf(':'))), ['arith/000010 vs tinker-studio/arith-gpt', 'arith/000020 vs tinker-studio/arith-gpt']);
    for (const line of lines) assert.ok(tip.includes(`- ${escapeMarkdown(line)}`), `the tooltip has "${line}":\n${tip}`);
    assert.deepStrictEqual(item.command?.arguments, [{ dir }]);
    assert.strictEqual(await vscode.commands.executeCommand(item.command!.command, ...item.command!.arguments!), true);
    assert.ok(api.evals.get({ dir }), 'a click opens the panel');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await waitFor('the panel closed', () => (api.evals.get({ dir }) ? undefined : true));
    // the context menu passes the row itself
    assert.strictEqual(await vscode.commands.executeCommand('tinker.openEvalResults', row), true);
    assert.ok(api.evals.get({ dir }), 'the context menu opens the panel');
  });

  test('the row follows summary.json and leaves with the folder', async () => {
    fs.writeFileSync(path.join(root, 'small.eval.json'), '{}\n');
    const dir = writeEvalResults(path.join(root, 'evals', 'small'), { checkpoints: 1, problems: 5, n: 1 });
    // generous limits: on a loaded machine the watcher's events can queue behind a burst of others
    const first = await waitFor('the eval row', () => rowOf(dir), 60_000);
    assert.strictEqual(api.runsTree.getTreeItem(first).description, '2 targets · 5 problems · n=1');
    writeEvalResults(dir, { checkpoints: 3, problems: 5, n: 1 });
    await waitFor('the row with 4 targets', async () => {
      const r = await rowOf(dir);
      return r && api.runsTree.getTreeItem(r).description === '4 targets · 5 problems · n=1' ? r : undefined;
    }, 60_000);
    fs.rmSync(path.join(root, 'evals'), { recursive: true });
    await waitFor('no row', async () => ((await rowOf(dir)) ? undefined : true), 60_000);
  });
});
