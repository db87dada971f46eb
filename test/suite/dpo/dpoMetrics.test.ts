// The metrics panel of a DPO run, in a real extension host: "Start DPO Run" on a tiny *.dpo.json trains
// on the embedded local engine (the real DPO loop writes metrics.jsonl), then the metrics panel, with
// its real webview driven through a recording transport, sends rows that carry every DPO metric, so
// the panel's DPO charts (the ones the webview puts first: loss, pair accuracy, margin, chosen/rejected
// rewards, chosen NLL) each have a train series, and the validation series where the run evaluated.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { DpoRunResult } from '../../../src/core/runs/runEvents';
import { Redactor } from '../../../src/core/config/redact';
import { Log } from '../../../src/vscode/common/log';
import { metricsPanels } from '../../../src/vscode/metrics/metricsPanels';
import { dpoCharts, ToWebview } from '../../../src/protocol/metricsProtocol';
import { EXTENSION_ID, useLocalEngineAndRunsFolder, waitFor } from '../helpers';
import { TransportRecorder } from '../common/recordingTransport';

type Snapshot = Extract<ToWebview, { type: 'snapshot' }>;

const RUN_TIMEOUT = 300_000;

/** A folder with pairs.jsonl (sums, the right answer chosen) and tiny-dpo.dpo.json; returns the spec path. */
function writeDpoSpec(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-dpo-spec-'));
  const pairs = Array.from({ length: 16 }, (_, i) => {
    const b = (i * 7) % 10;
    return JSON.stringify({ prompt: `What is ${i} + ${b}?`, chosen: String(i + b), rejected: String(i + b + 3) });
  });
  fs.writeFileSync(path.join(dir, 'pairs.jsonl'), pairs.join('\n') + '\n');
  const spec = { name: 'tiny-dpo', backend: 'local', model: 'tinker-studio/arith-gpt', renderer: 'chatml', lora_rank: 4, learning_rate: 0.004, batch_size: 4, max_steps: 3, eval_every: 1, save_every: 0, seed: 1, dataset: { path: 'pairs.jsonl', validation: { fraction: 0.25 } } };
  const file = path.join(dir, 'tiny-dpo.dpo.json');
  fs.writeFileSync(file, JSON.stringify(spec, null, 2) + '\n');
  return file;
}

suite('DPO run metrics panel', function () {
  this.timeout(RUN_TIMEOUT);
  const suiteState = useLocalEngineAndRunsFolder('tinker-dpo-metrics-');
  let log: Log;

  suiteSetup(() => {
    log = new Log(new Redactor(), 'Tinker (DPO metrics test)');
  });
  suiteTeardown(() => log.dispose());
  teardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('a DPO run started from its spec: the metrics panel gets every DPO chart’s series (loss, pair accuracy, margin, chosen/rejected rewards, chosen NLL), train and validation', async () => {
    const api = suiteState.api();
    const result = await vscode.commands.executeCommand<DpoRunResult>('tinker.startDpoRun', vscode.Uri.file(writeDpoSpec()));
    assert.ok(result, 'the command returns the run result');
    assert.strictEqual(result.kind, 'dpo');
    assert.strictEqual(result.status, 'completed', result.error);
    assert.strictEqual(path.dirname(result.runDir), suiteState.runsDir());

    const recorder = new TransportRecorder();
    const extensionUri = vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri;
    const panels = metricsPanels({ extensionUri, log, registry: api.registry, openIteration: async () => true }, recorder.factory);
    try {
      const panel = await panels.open(result.runDir);
      const transport = recorder.of(panel.panel);
      const snap = await waitFor('the snapshot (sent when the webview says ready)', () => transport.ofType<Snapshot>('snapshot').at(-1), 60_000);
      assert.deepStrictEqual(snap.problems, []);
      const keys = new Set(snap.rows.flatMap((r) => Object.keys(r.values)));
      // the charts the webview builds from these keys, in the order it shows them (first, above the GRPO ones)
      const charts = dpoCharts(keys);
      assert.deepStrictEqual(
        charts.map((c) => c.id),
        ['dpo-loss', 'dpo-accuracy', 'dpo-margin', 'dpo-rewards', 'dpo-chosen-nll'],
        `the DPO charts of the run's keys (${[...keys].sort().join(', ')})`,
      );
      const steps = new Set(snap.rows.map((r) => r.step));
      assert.deepStrictEqual([...steps].sort((a, b) => a - b), [0, 1, 2], 'one row per step');
      const finite = (key: string) => snap.rows.filter((r) => typeof r.values[key] === 'number' && Number.isFinite(r.values[key])).map((r) => r.step);
      for (const chart of charts) {
        for (const s of chart.series) {
          // every training series has a value each step; validation series where the run evaluated (eval_every 1)
          assert.deepStrictEqual([...new Set(finite(s.key))].sort((a, b) => a - b), [0, 1, 2], `${chart.id}: ${s.key} every step`);
        }
      }
      // the DPO identities the charts show: margin = chosen − rejected reward; accuracy a fraction
      for (const r of snap.rows.filter((x) => typeof x.values.margin === 'number')) {
        const v = r.values as Record<string, number>;
        assert.ok(Math.abs(v.margin! - (v.chosen_reward! - v.rejected_reward!)) < 1e-6, `step ${r.step}: margin = chosen_reward − rejected_reward`);
        assert.ok(v.accuracy! >= 0 && v.accuracy! <= 1, `step ${r.step}: accuracy in [0, 1]`);
      }
      // the reference is the policy at step 0: every log-ratio is 0 there
      const first = snap.rows.find((r) => r.step === 0 && typeof r.values.dpo_loss === 'number')!.values as Record<string, number>;
      assert.ok(Math.abs(first.dpo_loss! - Math.log(2)) < 1e-4 && Math.abs(first.margin!) < 1e-4, `step 0: loss log 2, margin 0 (got ${first.dpo_loss}, ${first.margin})`);
    } finally {
      panels.dispose();
    }
  });
});
