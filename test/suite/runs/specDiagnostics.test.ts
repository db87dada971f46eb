// An open run spec of any kind shows the spec layer's rules across fields as you type, at the field
// (here the base_url rule), and the problem goes when the spec is fixed.
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
});
