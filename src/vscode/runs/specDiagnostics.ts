// Problems of an open run spec (every kind of the spec kinds table) or sweep file as you type, from the
// spec layer. Run specs and *.sweep.json: the rules across fields the contributed JSON schema cannot
// say (base_url only with the custom backend, exactly one dataset source, …), underlined at their
// field; VS Code's JSON support reports the rest (types, ranges, unknown fields) from the JSON schema,
// so nothing is said twice. *.sweep.yaml / .yml: every problem (no JSON schema reaches YAML in VS Code
// itself: `yamlValidation` is the YAML extension's contribution point, not a core one). Sweeps also get
// each point's run spec validated, underlined at the parameter value that makes a bad point. Hints
// (a learning rate far from the model's recommended one, LoRA capacity below an SFT dataset's tokens)
// show at Information severity and never block a run.
import * as vscode from 'vscode';
import { isSweepFile, specKindOfFile } from '../../core/spec/kinds';
import type { SpecDiagnostic } from '../../core/spec/diagnostics';
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
    const file = doc.uri.path;
    const kind = specKindOfFile(file);
    const sweep = !kind && isSweepFile(file);
    if (!kind && !sweep) return;
    const version = doc.version;
    const text = doc.getText();
    let found: SpecDiagnostic[];
    try {
      found = kind ? await this.specProblems(kind, text, doc.uri.fsPath) : await this.sweepProblems(text, doc.uri.fsPath);
    } catch {
      return; // a spec being typed may be anything; the run reports what is wrong
    }
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

  private async specProblems(kind: NonNullable<ReturnType<typeof specKindOfFile>>, text: string, file: string): Promise<SpecDiagnostic[]> {
    // zod and the kinds' schemas load with the first spec opened, not at activation
    const [{ specDefinition }, { specDiagnostics }, { specHintDiagnostics }] = await Promise.all([import('../../core/kinds/specDefinition'), import('../../core/spec/diagnostics'), import('../../core/kinds/hints')]);
    const errors = specDiagnostics(await specDefinition(kind), text);
    return [...errors.filter((d) => d.rule), ...(await specHintDiagnostics(kind, text, file))];
  }

  private async sweepProblems(text: string, file: string): Promise<SpecDiagnostic[]> {
    const { sweepDiagnostics } = await import('../../core/experiments/sweepDiagnostics');
    const all = await sweepDiagnostics(text, file);
    // JSON: the contributed schema reports the schema's own problems
    return file.toLowerCase().endsWith('.json') ? all.filter((d) => d.rule || d.severity === 'info') : all;
  }
}
