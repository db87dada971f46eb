// Problems of open documents as you type: a diagnostics collection kept in step with edits, each check
// dropped when a newer edit came in meanwhile. A subclass says which documents it reads and what is wrong.
import * as vscode from 'vscode';
import { Disposable } from './lifecycle';

export interface DocumentProblem {
  offset: number;
  length: number;
  message: string;
  /** 'info': a hint that never blocks a run (shown at Information severity, code "hint") */
  severity?: 'error' | 'info';
}

export abstract class DocumentProblems extends Disposable {
  protected readonly collection: vscode.DiagnosticCollection;

  constructor(name: string) {
    super();
    this.collection = this._register(vscode.languages.createDiagnosticCollection(name));
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

  /** The document's problems, or undefined when it is not a document this checks. May throw: a file being typed may be anything. */
  protected abstract problems(doc: vscode.TextDocument): Promise<DocumentProblem[] | undefined>;

  private async check(doc: vscode.TextDocument): Promise<void> {
    const version = doc.version;
    let found: DocumentProblem[] | undefined;
    try {
      found = await this.problems(doc);
    } catch {
      return; // the run reports what is wrong
    }
    if (found === undefined) return;
    if (doc.isClosed || doc.version !== version) return; // a newer edit is being checked
    this.collection.set(
      doc.uri,
      found.map((d) => {
        const severity = d.severity === 'info' ? vscode.DiagnosticSeverity.Information : vscode.DiagnosticSeverity.Error;
        const diag = new vscode.Diagnostic(new vscode.Range(doc.positionAt(d.offset), doc.positionAt(d.offset + d.length)), d.message, severity);
        diag.source = 'Tinker Studio';
        if (d.severity === 'info') diag.code = 'hint';
        return diag;
      }),
    );
  }
}
