// On-policy distillation started through the extension on the embedded local engine: a GRPO run
// makes the teacher (its `final` sampler checkpoint), then "Tinker: Start GRPO Run" on a spec with
// `teacher: {run, checkpoint}` and no reward trains the student; the run logs teacher_kl, keeps each
// sample's teacher log-probs, the metrics panel gets the keys its KL chart plots and the breakdown
// panel serves the teacher's log-probs with the sample (the token strip shaded by KL).
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { GrpoRunResult } from '../../../src/core/runs/runEvents';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { Redactor } from '../../../src/core/config/redact';
import { Log } from '../../../src/vscode/common/log';
import { metricsPanels } from '../../../src/vscode/metrics/metricsPanels';
import { breakdownPanels } from '../../../src/vscode/breakdown/breakdownPanels';
import { teacherKlCharts, ToWebview } from '../../../src/protocol/metricsProtocol';
import { BreakdownSnapshot } from '../../../src/protocol/breakdownProtocol';
import { writeTinySpec } from './grpoFixtures';
import { EXTENSION_ID, useLocalEngineAndRunsFolder, waitFor } from '../helpers';
import { TransportRecorder } from '../common/recordingTransport';

const rowsOf = (runDir: string) =>
  fs
    .readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, number>);

suite('On-policy distillation from the extension host', function () {
  this.timeout(300_000);
  const suiteState = useLocalEngineAndRunsFolder('tinker-distill-runs-');
  let api: TinkerStudioTestHandles;

  suiteSetup(() => {
    api = suiteState.api();
  });

  test('a distillation spec with a local teacher checkpoint runs; teacher_kl and the teacher log-probs reach the metrics and breakdown panels', async () => {
    const teacherSpec = writeTinySpec({ name: 'tiny-teacher', iterations: 2, holdout: false });
    const dir = path.dirname(teacherSpec);
    const teacher = await vscode.commands.executeCommand<GrpoRunResult>('tinker.startGrpoRun', vscode.Uri.file(teacherSpec));
    assert.strictEqual(teacher?.status, 'completed', teacher?.error);

    const spec = JSON.parse(fs.readFileSync(teacherSpec, 'utf8')) as Record<string, unknown>;
    delete spec.reward;
    const distillSpec = path.join(dir, 'tiny-student.grpo.json');
    fs.writeFileSync(distillSpec, JSON.stringify({ ...spec, name: 'tiny-student', group_size: 1, save_every: 0, teacher: { run: teacher.runDir, checkpoint: 'final' } }, null, 2));
    const result = await vscode.commands.executeCommand<GrpoRunResult>('tinker.startGrpoRun', vscode.Uri.file(distillSpec));
    assert.ok(result, 'the command returns the run result');
    assert.strictEqual(result.status, 'completed', result.error);
    const rows = rowsOf(result.runDir);
    assert.deepStrictEqual(rows.map((r) => r.step), [0, 1]);
    for (const r of rows) assert.strictEqual(typeof r['teacher_kl'], 'number');
    const samples = fs
      .readFileSync(path.join(result.runDir, 'iteration_000000', 'train_samples.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { completion_tokens: number[]; teacher_logprobs?: number[] });
    assert.strictEqual(samples.length, 2, 'two groups of one sample');
    const withTokens = samples.findIndex((s) => s.completion_tokens.length > 0);
    assert.ok(withTokens >= 0);
    assert.strictEqual(samples[withTokens]!.teacher_logprobs?.length, samples[withTokens]!.completion_tokens.length);

    const log = new Log(new Redactor(), 'Tinker (test)');
    const recorder = new TransportRecorder();
    const extensionUri = vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri;
    const metrics = metricsPanels({ extensionUri, log, registry: api.registry, openIteration: async () => false }, recorder.factory);
    const breakdown = breakdownPanels({ extensionUri, log }, recorder.factory);
    try {
      const panel = await metrics.open(result.runDir);
      const transport = recorder.of(panel.panel);
      const keys = new Set<string>();
      await waitFor(
        'teacher_kl in the metrics panel',
        () => {
          for (const raw of transport.sent) {
            const parsed = ToWebview.safeParse(raw);
            if (parsed.success && (parsed.data.type === 'snapshot' || parsed.data.type === 'append')) for (const r of parsed.data.rows) for (const k of Object.keys(r.values)) keys.add(k);
          }
          return keys.has('teacher_kl') || undefined;
        },
        60_000,
      );
      assert.deepStrictEqual(teacherKlCharts(keys).map((c) => [c.title, c.series.map((s) => s.key)]), [['KL to the teacher', ['teacher_kl']]]);

      const b = await breakdown.open({ runDir: result.runDir, ref: { iteration: 0, split: 'train' } });
      const bt = recorder.of(b.panel);
      const snap = await waitFor('the breakdown snapshot', () => bt.sent.map((m) => BreakdownSnapshot.safeParse(m)).find((r) => r.success)?.data, 30_000);
      assert.strictEqual(snap.records.length, 2);
      const rec = snap.records[withTokens]!;
      await bt.deliver({ type: 'request', id: 41, method: 'sample', params: { ref: { iteration: 0, split: 'train' }, groupIdx: rec.group_idx, trajIdx: rec.traj_idx } });
      const reply = await waitFor('the sample reply', () => bt.ofType<{ type: 'reply'; id: number; ok: boolean; value?: { teacher_logprobs?: number[] } }>('reply').find((r) => r.id === 41), 30_000);
      assert.ok(reply.ok);
      assert.deepStrictEqual(reply.value?.teacher_logprobs, samples[withTokens]!.teacher_logprobs);
    } finally {
      metrics.dispose();
      breakdown.dispose();
      log.dispose();
    }
  });
});
