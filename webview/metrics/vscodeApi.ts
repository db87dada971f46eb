// The webview's handle on VS Code: post typed messages to the host and keep state across reloads.
import type { FromWebview, MetricsPanelState } from '../shared/metricsProtocol';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const api = acquireVsCodeApi();

export function post(message: FromWebview): void {
  api.postMessage(message);
}

export function getState(): unknown {
  return api.getState();
}

export function setState(state: MetricsPanelState): void {
  api.setState(state);
}
