// Problems of an open suite file (*.suite.json) as you type, from core/suite/diagnostics.ts: the rules
// the contributed JSON schema cannot say (entry names unique, the eval file there and valid, the
// metric one the eval reports), underlined at their field. VS Code's JSON support reports the schema's
// own problems from dist/suite.schema.json, so nothing is said twice.
import type * as vscode from 'vscode';
import { DocumentProblems, type DocumentProblem } from '../common/documentProblems';

const isSuiteFile = (doc: vscode.TextDocument) => doc.uri.scheme === 'file' && doc.uri.path.toLowerCase().endsWith('.suite.json');

export class SuiteDiagnostics extends DocumentProblems {
  constructor() {
    super('tinker-suite');
  }

  protected async problems(doc: vscode.TextDocument): Promise<DocumentProblem[] | undefined> {
    if (!isSuiteFile(doc)) return undefined;
    const { suiteDiagnostics } = await import('../../core/suite/diagnostics');
    return (await suiteDiagnostics(doc.getText(), doc.uri.fsPath)).filter((d) => d.rule).map((d) => ({ offset: d.offset, length: d.length, message: d.message }));
  }
}
