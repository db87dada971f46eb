// A pair's chosen and rejected completions as tinker-sample: documents, so a click in the pairs panel
// opens the native diff editor. The URI carries the text (tinker-sample://pairs/<id>/<side>.txt?doc=…),
// as the playground's: a diff reopened after a reload still shows what was compared.
import type * as vscode from 'vscode';
import { registerSampleSource } from '../samples/sampleDocuments';

/** the tinker-sample: authority of the pairs' diff documents */
export const PAIRS_AUTHORITY = 'pairs';

export function registerPairsDocuments(): vscode.Disposable {
  return registerSampleSource(PAIRS_AUTHORITY, (uri) => new URLSearchParams(uri.query).get('doc') ?? undefined);
}
