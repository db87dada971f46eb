// "Tinker: Reconcile Run Usage…" in the extension host, against a STAND-IN of the billing route
// (test/unit/runs/billingStandIn.ts: the Tinker service cannot run here and the engine keeps no
// billing), which the run's config.json names as its custom server: the command reads the service's
// counts of the run's sessions (no session opened), shows the table in an editor and returns it; with
// 403 it says "no billing access" in a warning (answered through the window seam), and a run on the
// embedded engine is told it has no billing.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { Reconciliation } from '../../../src/core/runs/usageReconcile';
import { BillingStandIn } from '../../unit/runs/billingStandIn';
import { activateExtension, waitFor } from '../helpers';

const HOUR = 3_600_000;

function writeRun(root: string, name: string, config: Record<string, unknown>, now: Date): string {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  const row = (step: number) => JSON.stringify({ step, 'usage/train_tokens': 500, 'usage/prefill_tokens': 200, 'usage/cached_prefill_tokens': 0, 'usage/sampled_tokens': 300 });
  fs.writeFileSync(path.join(dir, 'metrics.jsonl'), `${row(0)}\n${row(1)}\n`);
  fs.writeFileSync(path.join(dir, 'sessions.jsonl'), `${JSON.stringify({ session_id: 'sess-host', started_at: new Date(now.getTime() - 3 * HOUR).toISOString() })}\n`);
  fs.utimesSync(path.join(dir, 'metrics.jsonl'), new Date(now.getTime() - HOUR), new Date(now.getTime() - HOUR));
  return dir;
}

suite('Reconcile Run Usage (billing route stand-in)', function () {
  this.timeout(60_000);
  let standIn: BillingStandIn;
  let url: string;
  let root: string;

  suiteSetup(async () => {
    standIn = new BillingStandIn();
    url = await standIn.listen();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-usage-host-'));
  });
  suiteTeardown(async () => {
    await standIn?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('sums the service\'s counts of the run\'s session beside its own, in an editor; 403 says no billing access', async () => {
    const api = await activateExtension();
    const now = new Date();
    const dir = writeRun(root, 'billed-run', { backend: 'custom', base_url: url, model_name: 'Qwen/Qwen3-8B' }, now);
    const at = new Date(Math.floor((now.getTime() - 2 * HOUR) / HOUR) * HOUR);
    const bucket = { bucket_start: at.toISOString(), bucket_end: new Date(at.getTime() + HOUR).toISOString(), session_id: 'sess-host', base_model: 'Qwen/Qwen3-8B' };
    standIn.events = [
      { ...bucket, event_info: { type: 'training', token_count: 1000 } },
      { ...bucket, event_info: { type: 'sampling_prefill', cached: false, token_count: 400 } },
      { ...bucket, event_info: { type: 'sampling_sample', token_count: 550 } },
    ];
    const r = await vscode.commands.executeCommand<Reconciliation>('tinker.reconcileRunUsage', dir);
    assert.ok(r?.ok, JSON.stringify(r));
    assert.deepStrictEqual(r.own, { train: 1000, prefill: 400, cached_prefill: 0, sampled: 600 });
    assert.deepStrictEqual(r.service, { train: 1000, prefill: 400, cached_prefill: 0, sampled: 550 });
    const doc = await waitFor('the usage table in an editor', () => vscode.window.activeTextEditor?.document.getText().includes('Usage of billed-run') ? vscode.window.activeTextEditor.document : undefined);
    assert.match(doc.getText(), /^sampled\s+600\s+550\s+-50 \(-8\.3 %\)$/m);
    assert.ok(!standIn.requests.some((q) => q.path.includes('create_session')), 'no session opened to read usage');

    standIn.mode = 'forbidden';
    const warnings: string[] = [];
    const release = api.ui.override({ showWarningMessage: async (m: string) => (warnings.push(m), undefined) });
    try {
      const denied = await vscode.commands.executeCommand<Reconciliation>('tinker.reconcileRunUsage', dir);
      assert.ok(denied && !denied.ok);
      assert.strictEqual(denied.reason, 'no-billing-access');
      await waitFor('the warning', () => (warnings.length ? warnings : undefined));
      assert.match(warnings[0]!, /^Usage of billed-run: the service's usage cannot be read with this API key \(HTTP 403: no billing access\)/);
    } finally {
      release.dispose();
      standIn.mode = 'ok';
    }

    const local = writeRun(root, 'engine-run', { backend: 'local' }, now);
    const before = standIn.requests.length;
    assert.strictEqual(await vscode.commands.executeCommand('tinker.reconcileRunUsage', local), undefined);
    assert.strictEqual(standIn.requests.length, before, 'a run on the embedded engine asks no server');
  });
});
