// Inline evaluators (a spec's `evals`) in a run started through the extension on the embedded local
// engine: Start GRPO Run on a spec with an evaluator every 2 iterations writes its keys into the
// metrics rows of steps 0 and 2 (next to the holdout's, every step), and the metrics panel receives
// them in its snapshot, from which it draws the evaluator's chart.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { GrpoRunResult } from '../../../src/core/runs/runEvents';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { Redactor } from '../../../src/core/config/redact';
import { Log } from '../../../src/vscode/common/log';
import { metricsPanels } from '../../../src/vscode/metrics/metricsPanels';
import { inlineEvalCharts, ToWebview } from '../../../src/protocol/metricsProtocol';
import { writeTinySpec } from './grpoFixtures';
import { EXTENSION_ID, useLocalEngineAndRunsFolder, waitFor } from '../helpers';
import { TransportRecorder } from '../common/recordingTransport';

suite('Inline evaluators from the extension host', function () {
  this.timeout(240_000);
  const suiteState = useLocalEngineAndRunsFolder('tinker-inline-evals-');
  let api: TinkerStudioTestHandles;

  suiteSetup(() => {
    api = suiteState.api();
  });

  test('a GRPO run with an inline evaluator logs test/<name>/… at steps i % every == 0, and the metrics panel gets them', async () => {
    const specFile = writeTinySpec({ name: 'tiny-inline', iterations: 3 });
    const dir = path.dirname(specFile);
    fs.writeFileSync(path.join(dir, 'probe.jsonl'), '{"question":"What is 3 + 4?","answer":7}\n{"question":"What is 6 + 2?","answer":8}\n');
    const spec = JSON.parse(fs.readFileSync(specFile, 'utf8')) as Record<string, unknown>;
    spec.save_every = 0;
    spec.evals = [{ name: 'probe', dataset: { path: 'probe.jsonl' }, every: 2, n: 3 }];
    fs.writeFileSync(specFile, JSON.stringify(spec, null, 2));

    const result = await vscode.commands.executeCommand<GrpoRunResult>('tinker.startGrpoRun', vscode.Uri.file(specFile));
    assert.ok(result, 'the command returns the run result');
    assert.strictEqual(result.status, 'completed', result.error);
    const rows = fs
      .readFileSync(path.join(result.runDir, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Record<string, number>);
    assert.deepStrictEqual(rows.map((r) => r.step), [0, 1, 2]);
    const stepsWith = (key: string) => rows.filter((r) => typeof r[key] === 'number').map((r) => r.step);
    assert.deepStrictEqual(stepsWith('test/env/all/reward/total'), [0, 1, 2], 'the holdout every step');
    for (const k of ['test/probe/env/all/reward/total', 'test/probe/env/all/pass@1', 'test/probe/env/all/pass@3']) assert.deepStrictEqual(stepsWith(k), [0, 2], k);
    for (const r of rows.filter((x) => x.step !== 1)) assert.strictEqual(r['test/probe/env/all/total_episodes'], 6, '2 problems × n = 3');
    assert.ok(fs.existsSync(path.join(result.runDir, 'iteration_000002', 'eval_probe_samples.jsonl')));

    const log = new Log(new Redactor(), 'Tinker (test)');
    const recorder = new TransportRecorder();
    const extensionUri = vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri;
    const panels = metricsPanels({ extensionUri, log, registry: api.registry, openIteration: async () => false }, recorder.factory);
    const keys = new Set<string>();
    const panel = await panels.open(result.runDir);
    try {
      // the host sends a snapshot when the webview says it is ready, then appends
      const transport = recorder.of(panel.panel);
      await waitFor(
        "the evaluator's keys in the panel",
        () => {
          for (const raw of transport.sent) {
            const parsed = ToWebview.safeParse(raw);
            if (parsed.success && (parsed.data.type === 'snapshot' || parsed.data.type === 'append')) for (const r of parsed.data.rows) for (const k of Object.keys(r.values)) keys.add(k);
          }
          return keys.has('test/probe/env/all/pass@3') || undefined;
        },
        60_000,
      );
      assert.deepStrictEqual(
        inlineEvalCharts(keys).map((c) => c.series.map((s) => s.key)),
        [['test/probe/env/all/reward/total', 'test/probe/env/all/pass@1', 'test/probe/env/all/pass@3']],
      );
    } finally {
      panels.dispose();
      log.dispose();
    }
  });
});
