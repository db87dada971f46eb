// Problems of an open run spec (every kind of the spec kinds table) as you type, from the spec layer:
// the rules across fields the contributed JSON schema cannot say (base_url only with the custom
// backend, exactly one dataset source, …), underlined at their field. VS Code's JSON support reports
// the rest (types, ranges, unknown fields) from the JSON schema, so nothing is said twice.
import * as vscode from 'vscode';
import { specKindOfFile } from '../../core/spec/kinds';
import { Disposable } from '../common/lifecycle';

export class SpecDiagnostics extends Disposable {
  private readonly collection = this._register(vscode.languages.createDiagnosticCollection('tinker-spec'));

  constructor() {
    super();
    const check = (doc: vscode.TextDocument) => void this.check(doc);
    this._registerAll(
      vscode.workspace.onDidOpenTextDocument(check),
      vscode.workspace.onDidChangeTextDocument((e) => check(e.document)),
      vscode.workspace.onDidCloseTextDocument((doc) => this.collection.delete(doc.uri)),
    );
    vscode.workspace.textDocuments.forEach(check);
  }

  private async check(doc: vscode.TextDocument): Promise<void> {
    const kind = specKindOfFile(doc.uri.path);
    if (!kind) return;
    const version = doc.version;
    // zod and the kinds' schemas load with the first spec opened, not at activation
    const [{ specDefinition }, { specDiagnostics }] = await Promise.all([import('../../core/spec/registry'), import('../../core/spec/diagnostics')]);
    const found = specDiagnostics(await specDefinition(kind), doc.getText()).filter((d) => d.rule);
    if (doc.isClosed || doc.version !== version) return; // a newer edit is being checked
    this.collection.set(
      doc.uri,
      found.map((d) => {
        const diag = new vscode.Diagnostic(new vscode.Range(doc.positionAt(d.offset), doc.positionAt(d.offset + d.length)), d.message, vscode.DiagnosticSeverity.Error);
        diag.source = 'Tinker Studio';
        return diag;
      }),
    );
  }
}
