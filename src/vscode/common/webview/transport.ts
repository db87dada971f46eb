// How a panel host talks to its webview. Production uses the panel's own webview; the host tests
// wrap it to record what is sent and to deliver what a webview could send.
import type * as vscode from 'vscode';

export interface WebviewTransport {
  post(message: unknown): Thenable<boolean>;
  /** the handler's promise is awaited by transports that deliver messages themselves */
  onMessage(handler: (raw: unknown) => Promise<void>): vscode.Disposable;
}

export function webviewTransport(webview: vscode.Webview): WebviewTransport {
  return {
    post: (message) => webview.postMessage(message),
    onMessage: (handler) => webview.onDidReceiveMessage((raw: unknown) => void handler(raw)),
  };
}
