// The HTML of every webview panel: a strict CSP (nothing by default, scripts only by a fresh nonce,
// styles/fonts/images only from the extension), the panel's bundled script and CSS from
// dist/webview, and an #app root the script fills.
import * as crypto from 'node:crypto';
import * as vscode from 'vscode';

export interface PanelPage {
  /** the bundle's base name in dist/webview (`metrics` → metrics.js and metrics.css) */
  entry: string;
  title: string;
}

export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewPanelOptions & vscode.WebviewOptions {
  return {
    enableScripts: true,
    retainContextWhenHidden: false,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview'), vscode.Uri.joinPath(extensionUri, 'media')],
  };
}

/** Makes a panel, new or restored after a reload, show `page`: its options, icon and HTML. */
export function showPanelPage(panel: vscode.WebviewPanel, extensionUri: vscode.Uri, page: PanelPage): void {
  panel.webview.options = webviewOptions(extensionUri);
  panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'tinker.svg');
  panel.webview.html = renderPanelHtml(panel.webview, extensionUri, page);
}

export function renderPanelHtml(webview: vscode.Webview, extensionUri: vscode.Uri, page: PanelPage): string {
  const nonce = crypto.randomBytes(18).toString('base64');
  const asset = (name: string) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', name)).toString();
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${asset(`${page.entry}.css`)}">
<title>${escapeHtml(page.title)}</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="${asset(`${page.entry}.js`)}"></script>
</body>
</html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
