// Playground samples as tinker-sample: documents (tinker-sample://playground/<run>/<side>-<index>.txt),
// read from the workspace's playground history, so "Compare A↔B" opens the native diff editor.
import * as vscode from 'vscode';
import { SAMPLE_SCHEME, registerSampleSource } from './sampleDocuments';
import { readHistory, sampleDocumentText } from './playgroundHistory';

const AUTHORITY = 'playground';

export function playgroundSampleUri(runId: string, side: 'A' | 'B', index: number): vscode.Uri {
  return vscode.Uri.from({ scheme: SAMPLE_SCHEME, authority: AUTHORITY, path: `/${runId}/${side}-sample-${index}.txt` });
}

export function registerPlaygroundDocuments(state: vscode.Memento): vscode.Disposable {
  return registerSampleSource(AUTHORITY, (uri) => {
    const m = /^\/([\w-]+)\/([AB])-sample-(\d+)\.txt$/.exec(uri.path);
    if (!m) throw new Error(`${uri.toString()}: not a playground sample address`);
    const run = readHistory(state).find((h) => h.view.id === m[1]);
    const text = run && sampleDocumentText(run.view, m[2] === 'A' ? 'A' : 'B', Number(m[3]));
    if (text === undefined) throw new Error(`the playground history has no sample ${m[3]} of side ${m[2]} in run ${m[1]} (only the last runs are kept)`);
    return text;
  });
}
