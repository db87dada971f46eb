// Problems of an open suite file (*.suite.json) as you type, from core/suite/diagnostics.ts: the rules
// the contributed JSON schema cannot say (entry names unique, the eval file there and valid, the
// metric one the eval reports), underlined at their field. VS Code's JSON support reports the schema's
// own problems from dist/suite.schema.json, so nothing is said twice.
import * as vscode from 'vscode';
import { Disposable } from '../common/lifecycle';

const isSuiteFile = (doc: vscode.TextDocument) => doc.uri.scheme === 'file' && doc.uri.path.toLowerCase().endsWith('.suite.json');

export class SuiteDiagnostics extends Disposable {
  private readonly collection = this._register(vscode.languages.createDiagnosticCollection('tinker-suite'));

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

  /** The diagnostics shown for `uri` (the host tests read them). */
  get(uri: vscode.Uri): readonly vscode.Diagnostic[] {
    return this.collection.get(uri) ?? [];
  }

  private async check(doc: vscode.TextDocument): Promise<void> {
    if (!isSuiteFile(doc)) return;
    const version = doc.version;
    let found: Awaited<ReturnType<typeof import('../../core/suite/diagnostics').suiteDiagnostics>>;
    try {
      const { suiteDiagnostics } = await import('../../core/suite/diagnostics');
      found = (await suiteDiagnostics(doc.getText(), doc.uri.fsPath)).filter((d) => d.rule);
    } catch {
      return; // a suite being typed may be anything; the run reports what is wrong
    }
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
