// Playground samples as tinker-sample: documents, so "Compare A↔B" opens the native diff editor.
// The URI carries the document's text (tinker-sample://playground/<run>/<side>-sample-<i>.txt?doc=…):
// a diff reopened after a reload, or after the run left the history, still shows what was compared.
import * as vscode from 'vscode';
import type { RunView, SideId } from '../../webview/shared/playgroundProtocol';
import { sampleDocumentText } from './playgroundHistory';
import { SAMPLE_SCHEME, registerSampleSource } from './sampleDocuments';

const AUTHORITY = 'playground';
/** longer completions are cut in the document (the URI holds the text) */
const MAX_DOC_CHARS = 64_000;

export function playgroundSampleUri(run: RunView, side: SideId, index: number): vscode.Uri {
  let text = sampleDocumentText(run, side, index);
  if (text === undefined) throw new Error(`the run has no sample ${index} on side ${side}`);
  if (text.length > MAX_DOC_CHARS) text = `${text.slice(0, MAX_DOC_CHARS)}\n… (cut at ${MAX_DOC_CHARS} characters; Copy as JSON has all of it)\n`;
  return vscode.Uri.from({ scheme: SAMPLE_SCHEME, authority: AUTHORITY, path: `/${run.id}/${side}-sample-${index}.txt`, query: new URLSearchParams({ doc: text }).toString() });
}

export function registerPlaygroundDocuments(): vscode.Disposable {
  return registerSampleSource(AUTHORITY, (uri) => new URLSearchParams(uri.query).get('doc') ?? undefined);
}
