// VS Code's own network settings, handed to the Tinker client: undici does not go through VS Code's
// proxy support, so the client applies them itself (src/core/tinker/proxy.ts).
import * as vscode from 'vscode';
import type { NetworkOptions } from '../../core/tinker/proxy';

/** The settings that change how the client connects (a change reconnects). */
export const NETWORK_SETTINGS = ['http.proxy', 'http.noProxy', 'http.proxyStrictSSL', 'http.systemCertificates'];

export function readNetworkSettings(): NetworkOptions {
  const c = vscode.workspace.getConfiguration('http');
  const proxy = c.get<unknown>('proxy');
  const noProxy = c.get<unknown>('noProxy');
  return {
    proxy: typeof proxy === 'string' ? proxy : undefined,
    noProxy: Array.isArray(noProxy) ? noProxy.filter((x): x is string => typeof x === 'string') : [],
    strictSSL: c.get<unknown>('proxyStrictSSL') !== false,
    systemCertificates: c.get<unknown>('systemCertificates') !== false,
  };
}
