// Playground samples as tinker-sample: documents, so "Compare A↔B" opens the native diff editor.
// The URI carries the document's text (tinker-sample://playground/<run>/<side>-sample-<i>.txt?doc=…):
// a diff reopened after a reload, or after the run left the history, still shows what was compared.
import * as vscode from 'vscode';
// Registered at activation, so nothing here loads the playground's protocol (and zod with it).
import { registerSampleSource } from '../samples/sampleDocuments';

/** the tinker-sample: authority of playground samples (their URIs are made in playgroundHistory) */
export const PLAYGROUND_AUTHORITY = 'playground';

export function registerPlaygroundDocuments(): vscode.Disposable {
  return registerSampleSource(PLAYGROUND_AUTHORITY, (uri) => new URLSearchParams(uri.query).get('doc') ?? undefined);
}
