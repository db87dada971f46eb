// An open run spec of any kind shows the spec layer's rules across fields as you type, at the field
// (here the base_url rule), and the problem goes when the spec is fixed. Sweep files: a YAML sweep shows
// every problem (no JSON schema reaches YAML), a bad point at the parameter value that makes it, in
// YAML and in JSON, and a far-off learning rate as information, never an error.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { SPEC_KINDS, type SpecKind } from '../../../src/core/spec/kinds';
import { activateExtension, waitFor } from '../helpers';

/** A spec of each kind that is valid but for what the test adds (the rules run once the fields are right). */
const VALID: Record<SpecKind, Record<string, unknown>> = {
  grpo: { model: 'tinker-studio/arith-gpt', max_tokens: 6, iterations: 3, dataset: { path: 'train.jsonl' }, reward: { file: 'reward.py' } },
  sft: { model: 'tinker-studio/arith-gpt', dataset: { path: 'chats.jsonl' } },
  dpo: { model: 'tinker-studio/arith-gpt', dataset: { path: 'pairs.jsonl' } },
};

suite('Run spec diagnostics', function () {
  this.timeout(60_000);

  for (const kind of SPEC_KINDS) {
    test(`${kind.label} spec: base_url without the custom backend is underlined at base_url, until the backend is custom`, async () => {
      await activateExtension();
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-spec-diag-'));
      const file = path.join(dir, `diag${kind.extension}`);
      const text = JSON.stringify({ ...VALID[kind.id], backend: 'local', base_url: 'http://127.0.0.1:8000' }, null, 2);
      fs.writeFileSync(file, text);
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
      await vscode.window.showTextDocument(doc);
      const ours = () => vscode.languages.getDiagnostics(doc.uri).filter((d) => d.source === 'Tinker Studio');
      const [diag] = await waitFor('the base_url diagnostic', () => (ours().length > 0 ? ours() : undefined));
      assert.strictEqual(diag?.message, 'base_url: only used with backend "custom" (backend is "local")');
      const key = doc.positionAt(text.indexOf('"base_url"'));
      assert.deepStrictEqual([diag.range.start.line, diag.range.start.character, diag.range.end.character], [key.line, key.character, key.character + '"base_url"'.length]);
      assert.strictEqual(diag.severity, vscode.DiagnosticSeverity.Error);

      const edit = new vscode.WorkspaceEdit();
      const at = text.indexOf('"local"');
      edit.replace(doc.uri, new vscode.Range(doc.positionAt(at), doc.positionAt(at + '"local"'.length)), '"custom"');
      assert.ok(await vscode.workspace.applyEdit(edit));
      await waitFor('the diagnostic to go once the backend is custom', () => (ours().length === 0 ? true : undefined));
      await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }

  test('sweep files: a YAML schema problem at its field; a bad point at its value (YAML and JSON); a hint at Information', async () => {
    await activateExtension();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-sweep-diag-'));
    fs.writeFileSync(path.join(dir, 'base.grpo.json'), JSON.stringify({ ...VALID.grpo, backend: 'cloud', model: 'Qwen/Qwen3-8B' }));
    fs.writeFileSync(path.join(dir, 'train.jsonl'), '{"question": "1 + 1", "answer": "2"}\n');
    fs.writeFileSync(path.join(dir, 'reward.py'), 'def compute_reward(completion, ground_truth):\n    return 0.0\n');
    const open = async (name: string, text: string) => {
      fs.writeFileSync(path.join(dir, name), text);
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(dir, name)));
      await vscode.window.showTextDocument(doc);
      return doc;
    };
    const ours = (doc: vscode.TextDocument) => vscode.languages.getDiagnostics(doc.uri).filter((d) => d.source === 'Tinker Studio');
    const at = (doc: vscode.TextDocument, d: vscode.Diagnostic) => [d.range.start.line, d.range.start.character, doc.getText(d.range)];

    const yaml = 'base: base.grpo.json\nmethod: grid\nparameters:\n  learning_rate: {values: [0.0005, 0.01]}\n  group_size: {values: [4, 0]}\nmetric: {name: env/all/reward/total, goal: maximize}\n';
    const y = await open('d.sweep.yaml', yaml.replace('goal: maximize', 'goal: up'));
    const [goal] = await waitFor('the YAML schema problem', () => (ours(y).length > 0 ? ours(y) : undefined));
    assert.strictEqual(goal?.message, 'metric.goal: must be one of "maximize", "minimize" (got "up")');
    assert.deepStrictEqual(at(y, goal!), [5, 37, 'goal']);
    const edit = new vscode.WorkspaceEdit();
    const up = y.getText().indexOf('goal: up');
    edit.replace(y.uri, new vscode.Range(y.positionAt(up), y.positionAt(up + 'goal: up'.length)), 'goal: maximize');
    assert.ok(await vscode.workspace.applyEdit(edit));
    const found = await waitFor('the bad point and the hint', () => (ours(y).length === 2 ? ours(y) : undefined));
    const point = found.find((d) => d.severity === vscode.DiagnosticSeverity.Error)!;
    assert.match(point.message, /^points learning_rate_0\.0005\.group_size_0, learning_rate_0\.01\.group_size_0: base\.grpo\.json: group_size: must be at least 2/);
    assert.deepStrictEqual(at(y, point), [4, 27, '0']);
    const hint = found.find((d) => d.severity === vscode.DiagnosticSeverity.Information)!;
    assert.match(hint.message, /^learning_rate 0\.01 is \S+× above the recommended/);
    assert.deepStrictEqual(at(y, hint), [3, 35, '0.01']);
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');

    const json = '{\n  "base": "base.grpo.json",\n  "method": "grid",\n  "parameters": {"group_size": {"values": [4, 0]}},\n  "metric": {"name": "env/all/reward/total", "goal": "maximize"}\n}\n';
    const j = await open('d.sweep.json', json);
    const [bad] = await waitFor('the bad point in the JSON sweep', () => (ours(j).length > 0 ? ours(j) : undefined));
    assert.match(bad!.message, /^point group_size_0: base\.grpo\.json: group_size/);
    assert.deepStrictEqual(at(j, bad!), [3, 46, '0']);
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
