// The server origins the user confirmed as destinations of the API key, kept in global state (never
// in workspace settings, so a cloned repository cannot add one). "Tinker: Forget Trusted Servers"
// clears them.
import * as vscode from 'vscode';
import { classifyKeyDestination } from '../../core/config/keyOrigin';

const STATE_KEY = 'tinker.trustedKeyOrigins';

/** Asks the user whether the key may go to `origin`; true means yes. */
export type ConfirmOrigin = (origin: string) => Promise<boolean>;

export const askUser: ConfirmOrigin = async (origin) => {
  const send = 'Send Key to This Server';
  const pick = await vscode.window.showWarningMessage(
    `Send your Tinker API key to ${origin}?`,
    { modal: true, detail: 'This server is not the official Tinker cloud. Only confirm a server you run or trust; you can revoke this with "Tinker: Forget Trusted Servers".' },
    send,
  );
  return pick === send;
};

export class TrustedServers {
  constructor(
    private readonly state: vscode.Memento,
    private readonly confirm: ConfirmOrigin = askUser,
  ) {}

  origins(): string[] {
    const v = this.state.get<unknown>(STATE_KEY);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  }

  /**
   * Whether the key may be sent to `baseUrl`: the official cloud and confirmed origins yes; another
   * origin only if the user confirms now (then remembered); plain http to another machine never.
   */
  async mayReceiveKey(baseUrl: string): Promise<{ ok: true } | { ok: false; reason: string }> {
    const d = classifyKeyDestination(baseUrl, this.origins());
    switch (d.kind) {
      case 'official':
      case 'trusted':
        return { ok: true };
      case 'refused':
        return { ok: false, reason: d.reason };
      case 'needs-consent':
        if (!(await this.confirm(d.origin))) return { ok: false, reason: `you did not confirm ${d.origin} as a server for your API key` };
        await this.state.update(STATE_KEY, [...this.origins(), d.origin]);
        return { ok: true };
    }
  }

  async forgetAll(): Promise<void> {
    await this.state.update(STATE_KEY, undefined);
  }
}
