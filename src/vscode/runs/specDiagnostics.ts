// Problems of an open run spec (every kind of the spec kinds table) or sweep file as you type, from the
// spec layer. Run specs and *.sweep.json: the rules across fields the contributed JSON schema cannot
// say (base_url only with the custom backend, exactly one dataset source, …), underlined at their
// field; VS Code's JSON support reports the rest (types, ranges, unknown fields) from the JSON schema,
// so nothing is said twice. *.sweep.yaml / .yml: every problem (no JSON schema reaches YAML in VS Code
// itself: `yamlValidation` is the YAML extension's contribution point, not a core one). Sweeps also get
// each point's run spec validated, underlined at the parameter value that makes a bad point. Hints
// (a learning rate far from the model's recommended one, LoRA capacity below an SFT dataset's tokens)
// show at Information severity and never block a run.
import type * as vscode from 'vscode';
import { isSweepFile, specKindOfFile } from '../../core/spec/kinds';
import type { SpecDiagnostic } from '../../core/spec/diagnostics';
import { DocumentProblems, type DocumentProblem } from '../common/documentProblems';

export class SpecDiagnostics extends DocumentProblems {
  constructor() {
    super('tinker-spec');
  }

  protected async problems(doc: vscode.TextDocument): Promise<DocumentProblem[] | undefined> {
    const file = doc.uri.path;
    const kind = specKindOfFile(file);
    const sweep = !kind && isSweepFile(file);
    if (!kind && !sweep) return undefined;
    const text = doc.getText();
    const found = kind ? await this.specProblems(kind, text, doc.uri.fsPath) : await this.sweepProblems(text, doc.uri.fsPath);
    return found.map((d) => ({ offset: d.offset, length: d.length, message: d.message, ...(d.severity === 'info' ? { severity: 'info' as const } : {}) }));
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
