// Workspace Trust and reward code: in an untrusted workspace nothing is executed — only the static
// checks run, and a diagnostic says why — and granting trust re-validates with the examples. The
// test host's workspace is trusted (trust is disabled in its profile), so the validator here gets
// a stand-in of an untrusted workspace's trust state, which the test then grants.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { Redactor } from '../../../src/core/config/redact';
import { Log } from '../../../src/vscode/common/log';
import { RewardFileLookup, RewardValidator, TrustSource, UNTRUSTED_MESSAGE } from '../../../src/vscode/rewards/rewardValidation';
import { workspaceRoot } from '../helpers';

const LIMIT = 90_000;

/** stand-in of an untrusted workspace's trust state: untrusted until grant() */
class UntrustedWorkspaceStandIn implements TrustSource {
  private trusted = false;
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidGrant = this.emitter.event;
  get isTrusted(): boolean {
    return this.trusted;
  }
  grant(): void {
    this.trusted = true;
    this.emitter.fire();
  }
}

function diagnosticsOf(collection: vscode.DiagnosticCollection, uri: vscode.Uri, ok: (ds: readonly vscode.Diagnostic[]) => boolean, what: string): Promise<readonly vscode.Diagnostic[]> {
  return new Promise((resolve, reject) => {
    const now = collection.get(uri) ?? [];
    if (ok(now)) return resolve(now);
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`timed out waiting for ${what}; now: ${JSON.stringify((collection.get(uri) ?? []).map((d) => d.message))}`));
    }, LIMIT);
    const sub = vscode.languages.onDidChangeDiagnostics((e) => {
      if (!e.uris.some((u) => u.toString() === uri.toString())) return;
      const ds = collection.get(uri) ?? [];
      if (!ok(ds)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(ds);
    });
  });
}

suite('Reward functions in an untrusted workspace', function () {
  this.timeout(LIMIT * 2);

  test('nothing executes until trust is granted: static checks and an explanation, then the examples run', async () => {
    const dir = path.join(workspaceRoot(), 'untrusted-rewards');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'trust.py');
    // running it would leave a marker file behind
    const marker = path.join(dir, 'executed.txt');
    const src = `import socket\nopen(${JSON.stringify(marker)}, "w").close()\n\ndef compute_reward(completion, ground_truth):\n    return 1 / 0\n`;
    fs.writeFileSync(file, src);
    fs.writeFileSync(path.join(dir, 'trust.examples.jsonl'), '{"completion": "4", "ground_truth": "4"}\n');
    const uri = vscode.Uri.file(file);
    const changed = new vscode.EventEmitter<void>();
    const lookup: RewardFileLookup = {
      info: (u) => (u.fsPath === file ? {} : undefined),
      isRewardFile: (u) => u.fsPath === file,
      ready: () => Promise.resolve(),
      onDidChange: changed.event,
    };
    const trust = new UntrustedWorkspaceStandIn();
    const log = new Log(new Redactor(), 'Tinker (test)');
    const validator = new RewardValidator({ log, index: lookup, runsFolder: () => path.join(dir, 'runs'), trust, name: 'tinker-reward-trust-test' });
    try {
      const untrusted = diagnosticsOf(validator.collection, uri, (ds) => ds.length === 2, 'the untrusted diagnostics');
      const doc = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(doc);
      const ds = await untrusted;
      assert.deepStrictEqual(
        ds.map((d) => [d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character, d.severity, d.code, d.message]),
        [
          [0, 0, 0, 13, vscode.DiagnosticSeverity.Information, 'untrusted', UNTRUSTED_MESSAGE],
          [0, 7, 0, 13, vscode.DiagnosticSeverity.Warning, 'network', 'the module "socket" reaches the network: reward functions must run offline and be deterministic'],
        ],
      );
      assert.strictEqual(validator.state(uri)?.untrusted, true);
      assert.ok(!fs.existsSync(marker), 'the reward file was not run');

      const trusted = diagnosticsOf(validator.collection, uri, (d) => d.some((x) => x.code === 'exception'), 'validation after trust is granted');
      trust.grant();
      const after = await trusted;
      assert.deepStrictEqual(
        after.map((d) => [d.range.start.line, d.code, d.message]),
        [
          [0, 'network', 'the module "socket" reaches the network: reward functions must run offline and be deterministic'],
          [4, 'exception', 'ZeroDivisionError: division by zero (on example trust.examples.jsonl:1)'],
        ],
      );
      assert.ok(fs.existsSync(marker), 'once trusted, the file runs');
    } finally {
      validator.dispose();
      log.dispose();
      changed.dispose();
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    }
  });
});
