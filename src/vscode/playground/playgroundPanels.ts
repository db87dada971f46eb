// The sample playground panel of the window (one; reopening reveals it and applies what it was
// opened with). Activation registers only the serializer; the panel's code loads when it opens.
import type * as vscode from 'vscode';
import type { PlaygroundPanel, PlaygroundPanelServices, PlaygroundPreset } from './playgroundPanel';
import { Panels } from '../common/webview/panels';
import type { WebviewTransport } from '../common/webview/transport';

export const PLAYGROUND_VIEW_TYPE = 'tinker.playground';

export type PlaygroundPanels = Panels<PlaygroundPanel, PlaygroundPreset | undefined, typeof import('../../protocol/playgroundProtocol').PlaygroundPanelState>;

export function playgroundPanels(s: PlaygroundPanelServices, transport?: (panel: vscode.WebviewPanel) => WebviewTransport): PlaygroundPanels {
  return new Panels(
    {
      viewType: PLAYGROUND_VIEW_TYPE,
      state: async () => (await import('../../protocol/playgroundProtocol')).PlaygroundPanelState,
      keyOf: () => 'playground',
      subjectOf: () => undefined,
      title: () => 'Sample Playground',
      create: async (panel, preset, t) => new (await import('./playgroundPanel')).PlaygroundPanel(panel, s, t, preset),
    },
    s.extensionUri,
    s.log,
    transport,
  );
}

/** Opens (or reveals) the playground with the preset applied. */
export async function openPlayground(panels: PlaygroundPanels, preset: PlaygroundPreset | undefined): Promise<PlaygroundPanel> {
  const existing = panels.get(undefined);
  const panel = await panels.open(preset);
  if (existing && preset) await panel.applyPreset(preset);
  return panel;
}
