// The only module that knows about @vscode/webview-ui-toolkit (archived upstream): panels import
// their components from here, so replacing the toolkit touches this folder only.
import {
  Checkbox,
  provideVSCodeDesignSystem,
  vsCodeBadge,
  vsCodeButton,
  vsCodeCheckbox,
  vsCodeDivider,
  vsCodeProgressRing,
} from '@vscode/webview-ui-toolkit';

let registered = false;

/** Defines <vscode-badge>, <vscode-button>, <vscode-checkbox>, <vscode-divider>, <vscode-progress-ring>. */
export function registerComponents(): void {
  if (registered) return;
  registered = true;
  provideVSCodeDesignSystem().register(vsCodeBadge(), vsCodeButton(), vsCodeCheckbox(), vsCodeDivider(), vsCodeProgressRing());
}

/** Whether a <vscode-checkbox> is checked (true until the component has upgraded). */
export function isChecked(el: Element): boolean {
  return el instanceof Checkbox ? el.checked : true;
}
