// The Play as the Model panel of the window (one; reopening reveals it and applies what it was
// opened with). Activation registers only the serializer; the panel's code loads when it opens.
import type * as vscode from 'vscode';
import type { EnvPlayPanel, EnvPlayPanelServices, EnvPlayPreset } from './envPlayPanel';
import { Panels } from '../common/webview/panels';
import type { WebviewTransport } from '../common/webview/transport';

export const ENV_PLAY_VIEW_TYPE = 'tinker.envplay';

export type EnvPlayPanels = Panels<EnvPlayPanel, EnvPlayPreset, typeof import('../../protocol/envPlayProtocol').EnvPlayPanelState>;

export function envPlayPanels(s: EnvPlayPanelServices, transport?: (panel: vscode.WebviewPanel) => WebviewTransport): EnvPlayPanels {
  return new Panels(
    {
      viewType: ENV_PLAY_VIEW_TYPE,
      state: async () => (await import('../../protocol/envPlayProtocol')).EnvPlayPanelState,
      keyOf: () => 'envPlay',
      subjectOf: () => undefined,
      title: () => 'Play as the Model',
      create: async (panel, preset, t) => new (await import('./envPlayPanel')).EnvPlayPanel(panel, s, t, preset),
    },
    s.extensionUri,
    s.log,
    transport,
  );
}

/** Opens (or reveals) the panel with the preset applied. */
export async function openEnvPlay(panels: EnvPlayPanels, preset: EnvPlayPreset): Promise<EnvPlayPanel> {
  const existing = panels.get(undefined);
  const panel = await panels.open(preset);
  if (existing && preset) await panel.applyPreset(preset);
  return panel;
}
