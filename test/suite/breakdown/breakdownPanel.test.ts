// The GRPO group breakdown panel in a real extension host with its real webview: opened by
// "Tinker: Show Iteration" (with a run and step, and with a Runs view node), by a click on a metrics
// chart point (the metrics webview's openIteration request), and on a Python tinker-cookbook run
// directory that has no per-sample files (the panel says what is missing and what there is).
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { Redactor } from '../../../src/core/config/redact';
import type { SampleRecord } from '../../../src/core/runs/sampleRecord';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { breakdownPanels } from '../../../src/vscode/breakdown/breakdownPanels';
import { Log } from '../../../src/vscode/common/log';
import { metricsPanels } from '../../../src/vscode/metrics/metricsPanels';
import { BreakdownSnapshot } from '../../../src/protocol/breakdownProtocol';
import { activateExtension, EXTENSION_ID, useLocalEngineAndRunsFolder, waitFor } from '../helpers';
import { TransportRecorder } from '../common/recordingTransport';

function sample(group: number, traj: number, reward: number): SampleRecord {
  return {
    group_idx: group,
    traj_idx: traj,
    problem_id: `arith:${group}`,
    prompt: `user: What is ${group} + 1?\n`,
    completion: String(group + (reward === 1 ? 1 : 2)),
    content: String(group + (reward === 1 ? 1 : 2)),
    ground_truth: String(group + 1),
    completion_tokens: [49, 50],
    logprobs: [-0.1, -1.5],
    reward,
    advantage: 0,
    stop_reason: 'stop',
    termination: 'eos',
  };
}

/** A Tinker Studio run: iterations 0 and 1 with samples (group 0 mixed, group 1 all good). */
function studioRun(): string {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-breakdown-')), 'arith-20260101-000000');
  for (const it of [0, 1]) {
    fs.mkdirSync(path.join(dir, `iteration_00000${it}`), { recursive: true });
    const recs = [sample(0, 0, 1), sample(0, 1, 0), sample(1, 0, 1), sample(1, 1, 1)];
    fs.writeFileSync(path.join(dir, `iteration_00000${it}`, 'train_samples.jsonl'), recs.map((r) => JSON.stringify(r)).join('\n') + '\n');
  }
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_name: 'tinker-studio/arith-gpt' }));
  fs.writeFileSync(path.join(dir, 'metrics.jsonl'), '{"step": 0, "optim/kl_sample_train_v1": 0.002, "optim/entropy": 1.5}\n{"step": 1, "optim/kl_sample_train_v1": 0.003}\n');
  return dir;
}

suite('GRPO group breakdown panel', function () {
  this.timeout(60_000);
  let api: TinkerStudioTestHandles;
  let log: Log;

  suiteSetup(async () => {
    api = await activateExtension();
    log = new Log(new Redactor(), 'Tinker (test)');
  });

  suiteTeardown(() => log.dispose());

  teardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  /** A breakdown panel of `runDir` (its own registry, messages recorded) and the first snapshot it sent. */
  async function openRecorded(runDir: string, ref?: { iteration: number; split: 'train' | 'eval' }) {
    const recorder = new TransportRecorder();
    const extensionUri = vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri;
    const panels = breakdownPanels({ extensionUri, log }, recorder.factory);
    const panel = await panels.open({ runDir, ...(ref ? { ref } : {}) });
    const transport = recorder.of(panel.panel);
    const snap = await waitFor('the snapshot', () => transport.sent.map((m) => BreakdownSnapshot.safeParse(m)).find((r) => r.success)?.data, 30_000);
    return { panels, transport, snap };
  }

  test('Show Iteration with a run and a step opens that iteration; again with another step reuses the panel', async () => {
    const dir = studioRun();
    assert.strictEqual(await vscode.commands.executeCommand('tinker.showIteration', { runDir: dir, step: 0 }), true);
    const panel = api.breakdowns.get({ runDir: dir });
    assert.ok(panel);
    assert.deepStrictEqual(panel.shown, { iteration: 0, split: 'train' });
    assert.strictEqual(await vscode.commands.executeCommand('tinker.showIteration', { runDir: dir, step: 1 }), true);
    assert.strictEqual(api.breakdowns.get({ runDir: dir }), panel);
    assert.deepStrictEqual(panel.shown, { iteration: 1, split: 'train' });
    assert.strictEqual(panel.panel.title, 'Groups: arith-20260101-000000 #1');
    assert.ok(/script-src 'nonce-[^']+'/.test(panel.panel.webview.html), 'scripts by nonce');
  });

  test('Show Iteration on a Runs view node opens its last sampled iteration', async () => {
    const dir = studioRun();
    assert.strictEqual(await vscode.commands.executeCommand('tinker.showIteration', { kind: 'run', run: { dir } }), true);
    const panel = api.breakdowns.get({ runDir: dir });
    assert.ok(panel);
    await waitFor('the panel to settle on the last sampled iteration', () => (panel.shown?.iteration === 1 ? true : undefined), 30_000);
  });

  test('a click on a metrics chart point (the webview’s openIteration request) opens that iteration’s breakdown', async () => {
    const dir = studioRun();
    const recorder = new TransportRecorder();
    const extensionUri = vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri;
    const metrics = metricsPanels(
      { extensionUri, log, registry: api.registry, openIteration: async (runDir, step) => (await vscode.commands.executeCommand<boolean>('tinker.showIteration', { runDir, step })) === true },
      recorder.factory,
    );
    try {
      const panel = await metrics.open(dir);
      const transport = recorder.of(panel.panel);
      await transport.deliver({ type: 'request', id: 1, method: 'openIteration', params: { step: 0 } });
      assert.deepStrictEqual(transport.ofType<{ type: 'reply'; id: number }>('reply'), [{ type: 'reply', id: 1, ok: true, value: { opened: true } }]);
      const breakdown = api.breakdowns.get({ runDir: dir });
      assert.ok(breakdown, 'the breakdown panel is open');
      assert.deepStrictEqual(breakdown.shown, { iteration: 0, split: 'train' });
    } finally {
      metrics.dispose();
    }
  });

  test('the webview gets the iteration’s groups, the step’s KL and entropy, and the sampled iterations', async () => {
    const dir = studioRun();
    const { panels, transport, snap } = await openRecorded(dir, { iteration: 0, split: 'train' });
    try {
      assert.strictEqual(snap.records.length, 4);
      assert.deepStrictEqual(snap.available, { train: [0, 1], eval: [] });
      assert.deepStrictEqual(snap.step, { kl: 0.002, entropy: 1.5 });
      assert.strictEqual(snap.missing, undefined);
      // the list gets previews and each prompt once; the whole sample and the text search are requests
      assert.deepStrictEqual(snap.prompts, [{ group_idx: 0, prompt: 'user: What is 0 + 1?\n' }, { group_idx: 1, prompt: 'user: What is 1 + 1?\n' }]);
      assert.deepStrictEqual(snap.records.map((r) => [r.group_idx, r.traj_idx, r.preview, r.complete, r.token_count]), [[0, 0, '1', true, 2], [0, 1, '2', true, 2], [1, 0, '2', true, 2], [1, 1, '2', true, 2]]);
      await transport.deliver({ type: 'request', id: 7, method: 'sample', params: { ref: { iteration: 0, split: 'train' }, groupIdx: 0, trajIdx: 1 } });
      await transport.deliver({ type: 'request', id: 8, method: 'search', params: { ref: { iteration: 0, split: 'train' }, text: 'WHAT IS 1 +' } });
      await transport.deliver({ type: 'request', id: 9, method: 'sample', params: { ref: { iteration: 0, split: 'train' }, groupIdx: 5, trajIdx: 0 } });
      const replies = transport.ofType<{ type: 'reply'; id: number }>('reply').filter((r) => r.id >= 7);
      assert.deepStrictEqual(replies.slice(0, 2), [
        { type: 'reply', id: 7, ok: true, value: { completion: '2', content: '2', tokens: [49, 50], logprobs: [-0.1, -1.5] } },
        { type: 'reply', id: 8, ok: true, value: { groups: [1] } },
      ]);
      assert.deepStrictEqual(replies[2], { type: 'reply', id: 9, ok: false, error: 'iteration 0 has no sample 0 in group 5' });
      await transport.deliver({ type: 'show', ref: { iteration: 1, split: 'train' } });
      const last = BreakdownSnapshot.parse(transport.sent.at(-1));
      assert.deepStrictEqual(last.shown, { iteration: 1, split: 'train' });
      assert.deepStrictEqual(last.step, { kl: 0.003, entropy: null });
    } finally {
      panels.dispose();
    }
  });

  test('a sample with reasoning and tool calls: the list gets flags, the sample request the parsed reply (a malformed call kept with why)', async () => {
    // the records test/ui/messages-steps.mjs shows: Qwen3 replies the qwen3 renderer parsed
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-breakdown-')), 'qwen3-tools');
    fs.mkdirSync(path.join(dir, 'iteration_000000'), { recursive: true });
    fs.copyFileSync(path.resolve(__dirname, '../../../../test/fixtures/samples/qwen3-tool-call.jsonl'), path.join(dir, 'iteration_000000', 'train_samples.jsonl'));
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_name: 'Qwen/Qwen3-8B' }));
    const { panels, transport, snap } = await openRecorded(dir, { iteration: 0, split: 'train' });
    try {
      assert.deepStrictEqual(
        snap.records.map((r) => [r.traj_idx, r.has_thinking, r.tool_call_count, r.malformed_call_count]),
        [[0, true, 1, undefined], [1, true, undefined, 1], [2, true, undefined, undefined], [3, true, undefined, undefined]],
      );
      assert.ok(snap.records.every((r) => !('thinking' in r) && !('tool_calls' in r)), 'the list carries flags only');
      for (const [id, trajIdx] of [[21, 0], [22, 1]] as const) await transport.deliver({ type: 'request', id, method: 'sample', params: { ref: { iteration: 0, split: 'train' }, groupIdx: 0, trajIdx } });
      const replies = transport.ofType<{ type: 'reply'; id: number; ok: boolean; value: { content: string; thinking?: string; tool_calls?: unknown; unparsed_tool_calls?: Array<{ error: string; raw_text: string }> } }>('reply');
      const call = replies.find((r) => r.id === 21)!.value;
      assert.strictEqual(call.content, 'I will add them with the tool.\n');
      assert.ok(call.thinking?.startsWith('The user wants 123 + 456.'));
      assert.deepStrictEqual(call.tool_calls, [{ type: 'function', function: { name: 'add', arguments: '{"a": 123, "b": 456}' } }]);
      const bad = replies.find((r) => r.id === 22)!.value;
      assert.strictEqual(bad.tool_calls, undefined);
      assert.match(bad.unparsed_tool_calls?.[0]?.error ?? '', /JSON/);
      assert.ok(bad.unparsed_tool_calls?.[0]?.raw_text.startsWith('<tool_call>'));
    } finally {
      panels.dispose();
    }
  });

  test('a cookbook run directory without sample files: the panel says what is missing and what the iteration has', async () => {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-cookbook-')), 'math-rl');
    fs.mkdirSync(path.join(dir, 'iteration_000000'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_name: 'Qwen/Qwen3-8B' }));
    fs.writeFileSync(path.join(dir, 'metrics.jsonl'), '{"step": 0, "env/all/reward/total": 0.25}\n');
    fs.writeFileSync(path.join(dir, 'iteration_000000', 'train_rollout_summaries.jsonl'), '{"schema_version": 1}\n{"schema_version": 1}\n');
    fs.writeFileSync(path.join(dir, 'iteration_000000', 'train_logtree.html'), '<html></html>');
    const recorder = new TransportRecorder();
    const extensionUri = vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri;
    const panels = breakdownPanels({ extensionUri, log }, recorder.factory);
    try {
      const panel = await panels.open({ runDir: dir });
      const transport = recorder.of(panel.panel);
      const snap = await waitFor('the snapshot', () => transport.sent.map((m) => BreakdownSnapshot.safeParse(m)).find((r) => r.success)?.data, 30_000);
      assert.deepStrictEqual(snap.shown, { iteration: 0, split: 'train' });
      assert.deepStrictEqual(snap.records, []);
      assert.match(snap.missing ?? '', /No train_samples\.jsonl in iteration_000000\//);
      assert.match(snap.missing ?? '', /train_rollout_summaries\.jsonl \(2 rollouts\)/);
      assert.match(snap.missing ?? '', /train_logtree\.html/);
    } finally {
      panels.dispose();
    }
  });
});

suite('Sample diffs', function () {
  this.timeout(60_000);

  suiteSetup(async () => {
    await activateExtension();
  });

  teardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('Compare Samples opens the group’s best (left) against its worst (right) as tinker-sample: documents', async () => {
    const dir = studioRun();
    const r = await vscode.commands.executeCommand<{ left: string; right: string }>('tinker.compareSamples', { runDir: dir, iteration: 1, groupIdx: 0 });
    assert.ok(r);
    const left = vscode.Uri.parse(r.left);
    const right = vscode.Uri.parse(r.right);
    assert.strictEqual(left.scheme, 'tinker-sample');
    assert.strictEqual(left.path, '/arith-20260101-000000/iteration_000001/train/group-0-sample-0.txt');
    assert.strictEqual(right.path, '/arith-20260101-000000/iteration_000001/train/group-0-sample-1.txt');
    const leftText = (await vscode.workspace.openTextDocument(left)).getText();
    const rightText = (await vscode.workspace.openTextDocument(right)).getText();
    assert.match(leftText, /^# training iteration 1 · group 0 · sample 0\n/);
    assert.match(leftText, /\nreward: {7}1\n/);
    assert.match(rightText, /\nreward: {7}0\n/);
    assert.match(rightText, /## completion\n2\n/);
    await waitFor('the diff editor', () => (vscode.window.tabGroups.activeTabGroup.activeTab?.input instanceof vscode.TabInputTextDiff ? true : undefined), 30_000);
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab!;
    assert.ok(tab.input instanceof vscode.TabInputTextDiff);
    assert.strictEqual(tab.input.original.toString(), left.toString());
    assert.strictEqual(tab.input.modified.toString(), right.toString());
  });
});

/** A holdout evaluation's sample of problem `arith:<p>` (one sample per problem, as the GRPO loop writes). */
function evalSample(group: number, p: number, reward: number): SampleRecord {
  return { ...sample(p, 0, reward), group_idx: group, problem_id: `arith:${p}`, completion: reward === 1 ? String(p + 1) : `${p + 1}0`, content: reward === 1 ? String(p + 1) : `${p + 1}0` };
}

/**
 * A run with holdout evaluations at iterations 0, 2 and 4 over problems arith:0..4. From the first
 * to the latest: arith:0 0 → 1 and arith:4 0 → 1 improve, arith:2 1 → 0 regresses, the rest stay;
 * the latest lists the problems in reverse order.
 */
function evaluatedRun(name = 'arith-evals', parent = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-evals-'))): string {
  const dir = path.join(parent, name);
  const evals: Record<number, SampleRecord[]> = {
    0: [0, 0, 1, 1, 0].map((r, p) => evalSample(p, p, r)),
    2: [1, 0, 1, 1, 0].map((r, p) => evalSample(p, p, r)),
    4: [1, 0, 0, 1, 1].map((r, p) => evalSample(4 - p, p, r)),
  };
  for (const [it, recs] of Object.entries(evals)) {
    const idir = path.join(dir, `iteration_${it.padStart(6, '0')}`);
    fs.mkdirSync(idir, { recursive: true });
    fs.writeFileSync(path.join(idir, 'eval_test_samples.jsonl'), recs.map((r) => JSON.stringify(r)).join('\n') + '\n');
    fs.writeFileSync(path.join(idir, 'train_samples.jsonl'), [sample(0, 0, 1), sample(0, 1, 0)].map((r) => JSON.stringify(r)).join('\n') + '\n');
  }
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_name: 'tinker-studio/arith-gpt' }));
  return dir;
}

async function activeDiff(): Promise<vscode.TabInputTextDiff> {
  return waitFor('the diff editor', () => {
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    return input instanceof vscode.TabInputTextDiff ? input : undefined;
  }, 30_000);
}

const textOf = async (uri: string) => (await vscode.workspace.openTextDocument(vscode.Uri.parse(uri))).getText();

suite('Sample diffs across evaluations and runs', function () {
  this.timeout(60_000);

  suiteSetup(async () => {
    await activateExtension();
  });

  teardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('Compare Holdout Problem Across Evaluations opens the problem in the first (left) and the latest (right) evaluation', async () => {
    const dir = evaluatedRun();
    const r = await vscode.commands.executeCommand<{ title: string; left: string; right: string }>('tinker.compareEvaluations', { runDir: dir, problemId: 'arith:2' });
    assert.ok(r);
    assert.strictEqual(r.title, 'arith-evals arith:2 · reward 1 → 0 (evaluation 0 ↔ 4)');
    assert.strictEqual(vscode.Uri.parse(r.left).path, '/arith-evals/iteration_000000/eval/group-2-sample-0.txt');
    assert.strictEqual(vscode.Uri.parse(r.right).path, '/arith-evals/iteration_000004/eval/group-2-sample-0.txt');
    const left = await textOf(r.left);
    const right = await textOf(r.right);
    assert.match(left, /^# holdout evaluation iteration 0 · group 2 · sample 0\nproblem: {6}arith:2\nreward: {7}1\n/);
    assert.match(right, /^# holdout evaluation iteration 4 · group 2 · sample 0\nproblem: {6}arith:2\nreward: {7}0\n/);
    assert.match(right, /## completion\n30\n/);
    const diff = await activeDiff();
    assert.strictEqual(diff.original.toString(), r.left);
    assert.strictEqual(diff.modified.toString(), r.right);
    assert.strictEqual(vscode.window.tabGroups.activeTabGroup.activeTab?.label, r.title);
  });

  test('from a sample of an evaluation in the breakdown: that problem, first evaluation against that one', async () => {
    const dir = evaluatedRun();
    // group 4 of evaluation 4 is problem arith:0 (the latest lists them in reverse)
    const r = await vscode.commands.executeCommand<{ title: string; left: string; right: string }>('tinker.compareEvaluations', { runDir: dir, iteration: 2, groupIdx: 0, trajIdx: 0 });
    assert.ok(r);
    assert.strictEqual(r.title, 'arith-evals arith:0 · reward 0 → 1 (evaluation 0 ↔ 2)');
    const fromLatest = await vscode.commands.executeCommand<{ title: string; left: string; right: string }>('tinker.compareEvaluations', { runDir: dir, iteration: 4, groupIdx: 4 });
    assert.ok(fromLatest);
    assert.strictEqual(fromLatest.title, 'arith-evals arith:0 · reward 0 → 1 (evaluation 0 ↔ 4)');
    assert.strictEqual(vscode.Uri.parse(fromLatest.right).path, '/arith-evals/iteration_000004/eval/group-4-sample-0.txt');
    assert.strictEqual((await activeDiff()).modified.toString(), fromLatest.right);
  });

  test('What Changed opens a multi-diff of the changed holdout problems, improved first, each titled with the reward before → after', async () => {
    const dir = evaluatedRun();
    const r = await vscode.commands.executeCommand<{ title: string; entries: Array<{ label: string; left: string; right: string }> }>('tinker.whatChanged', { runDir: dir });
    assert.ok(r);
    assert.strictEqual(r.title, 'What changed: arith-evals, evaluation 0 → 4 (2 improved, 1 regressed, 2 unchanged of 5 paired samples)');
    // equal changes keep the latest evaluation's order (arith:4 is its group 0)
    assert.deepStrictEqual(r.entries.map((e) => e.label), ['arith:4 · reward 0 → 1', 'arith:0 · reward 0 → 1', 'arith:2 · reward 1 → 0']);
    for (const e of r.entries) {
      assert.strictEqual(vscode.Uri.parse(e.left).path, `/arith-evals/${e.label}`);
      assert.strictEqual(vscode.Uri.parse(e.right).path, `/arith-evals/${e.label}`);
    }
    const first = r.entries[0]!;
    assert.match(await textOf(first.left), /^# holdout evaluation iteration 0 · group 4 · sample 0\nproblem: {6}arith:4\nreward: {7}0\n/);
    assert.match(await textOf(first.right), /^# holdout evaluation iteration 4 · group 0 · sample 0\nproblem: {6}arith:4\nreward: {7}1\n/);
    assert.match(await textOf(r.entries[2]!.right), /\nreward: {7}0\n[\s\S]*## completion\n30\n/);
    const tab = await waitFor('the multi-diff editor', () => {
      const t = vscode.window.tabGroups.activeTabGroup.activeTab;
      return t?.label.startsWith('What changed: arith-evals') ? t : undefined;
    }, 30_000);
    // the workbench appends the number of entries to the title
    assert.strictEqual(tab.label, `${r.title} (3 files)`);
    // the tab's input (TabInputTextMultiDiff; not in @types/vscode 1.138) lists the diffs it shows
    const input: unknown = tab.input;
    assert.ok(typeof input === 'object' && input !== null && 'textDiffs' in input && Array.isArray(input.textDiffs), 'a multi-diff tab');
    const diffs: unknown[] = input.textDiffs;
    assert.deepStrictEqual(
      diffs.map((d) => (d instanceof vscode.TabInputTextDiff ? [d.original.toString(), d.modified.toString()] : undefined)),
      r.entries.map((e) => [e.left, e.right]),
    );
  });

  test('What Changed between two given evaluations; none changed: says so and opens nothing', async () => {
    const dir = evaluatedRun();
    const r = await vscode.commands.executeCommand<{ title: string; entries: unknown[] }>('tinker.whatChanged', { runDir: dir, before: 0, after: 2 });
    assert.ok(r);
    assert.strictEqual(r.entries.length, 1);
    const same = await vscode.commands.executeCommand<{ title: string; entries: unknown[] }>('tinker.whatChanged', { runDir: dir, before: 2, after: 2 });
    assert.ok(same);
    assert.deepStrictEqual(same.entries, []);
    assert.match(same.title, /0 improved, 0 regressed, 5 unchanged of 5 paired samples/);
  });

  test('Compare Runs on the Same Prompt pairs a sample with the other run’s sample of that prompt (latest evaluations)', async () => {
    const a = evaluatedRun('run-a');
    const b = evaluatedRun('run-b');
    // evaluation 2 of run-a, group 2 (arith:2, reward 1) against run-b's latest evaluation (arith:2 is its group 2, reward 0)
    const r = await vscode.commands.executeCommand<{ title: string; left: string; right: string }>('tinker.compareRuns', { runDir: a, otherRunDir: b, iteration: 2, split: 'eval', groupIdx: 2 });
    assert.ok(r);
    assert.strictEqual(r.title, 'run-a evaluation 2 ↔ run-b evaluation 4: arith:2 · reward 1 → 0');
    assert.strictEqual(vscode.Uri.parse(r.left).path, '/run-a/iteration_000002/eval/group-2-sample-0.txt');
    assert.strictEqual(vscode.Uri.parse(r.right).path, '/run-b/iteration_000004/eval/group-2-sample-0.txt');
    assert.match(await textOf(r.left), /\nreward: {7}1\n[\s\S]*## prompt\nuser: What is 2 \+ 1\?\n/);
    assert.match(await textOf(r.right), /\nreward: {7}0\n[\s\S]*## prompt\nuser: What is 2 \+ 1\?\n/);
    const diff = await activeDiff();
    assert.strictEqual(diff.original.toString(), r.left);
    assert.strictEqual(diff.modified.toString(), r.right);
  });

  test('the breakdown panel of an evaluation reaches What Changed and the comparisons', async () => {
    const dir = evaluatedRun();
    const recorder = new TransportRecorder();
    const extensionUri = vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri;
    const log = new Log(new Redactor(), 'Tinker (test)');
    const panels = breakdownPanels({ extensionUri, log }, recorder.factory);
    try {
      const panel = await panels.open({ runDir: dir, ref: { iteration: 0, split: 'eval' } });
      const transport = recorder.of(panel.panel);
      const snap = await waitFor('the snapshot', () => transport.sent.map((m) => BreakdownSnapshot.safeParse(m)).find((r) => r.success)?.data, 30_000);
      assert.deepStrictEqual(snap.available.eval, [0, 2, 4]);
      await transport.deliver({ type: 'whatChanged', ref: { iteration: 0, split: 'eval' } });
      await waitFor('the multi-diff editor', () => vscode.window.tabGroups.activeTabGroup.activeTab?.label.startsWith('What changed: arith-evals, evaluation 0 → 4'), 30_000);
      await transport.deliver({ type: 'compareEvaluations', ref: { iteration: 0, split: 'eval' }, groupIdx: 2, trajIdx: 0 });
      const diff = await activeDiff();
      assert.strictEqual(diff.original.path, '/arith-evals/iteration_000000/eval/group-2-sample-0.txt');
      assert.strictEqual(diff.modified.path, '/arith-evals/iteration_000004/eval/group-2-sample-0.txt');
    } finally {
      panels.dispose();
      log.dispose();
    }
  });
});

suite('Runs view: a run expands to its sampled iterations', function () {
  this.timeout(60_000);
  const ctx = useLocalEngineAndRunsFolder('tinker-iterations-');

  teardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('the iterations are listed newest first (training after its evaluation); a click opens that iteration’s breakdown', async () => {
    const api = ctx.api();
    const dir = evaluatedRun('arith-iterations', ctx.runsDir());
    await api.runs.refresh();
    const row = await waitFor('the run in the Runs view', async () => (await api.runsTree.localRuns()).find((r) => r.run.dir === dir));
    assert.strictEqual(api.runsTree.getTreeItem(row).collapsibleState, vscode.TreeItemCollapsibleState.Collapsed);
    const children = await api.runsTree.getChildren(row);
    const items = children.map((n) => api.runsTree.getTreeItem(n));
    assert.deepStrictEqual(
      items.map((i) => `${String(i.label)} (${String(i.description)})`),
      ['iteration 4 (training)', 'iteration 4 (holdout evaluation)', 'iteration 2 (training)', 'iteration 2 (holdout evaluation)', 'iteration 0 (training)', 'iteration 0 (holdout evaluation)'],
    );
    const evalItem = items[3]!;
    assert.strictEqual(evalItem.contextValue, 'tinker.iteration:eval');
    assert.ok(evalItem.command);
    assert.strictEqual(evalItem.command.command, 'tinker.showIteration');
    assert.strictEqual(await vscode.commands.executeCommand(evalItem.command.command, ...(evalItem.command.arguments ?? [])), true);
    const panel = api.breakdowns.get({ runDir: dir });
    assert.ok(panel, 'the breakdown panel is open');
    assert.deepStrictEqual(panel.shown, { iteration: 2, split: 'eval' });
    assert.strictEqual(panel.panel.title, 'Groups: arith-iterations #2 (eval)');
    const trainItem = items[0]!;
    assert.strictEqual(await vscode.commands.executeCommand(trainItem.command!.command, ...(trainItem.command!.arguments ?? [])), true);
    assert.deepStrictEqual(panel.shown, { iteration: 4, split: 'train' });
  });

  test('a run without samples files says so under its row', async () => {
    const api = ctx.api();
    const dir = path.join(ctx.runsDir(), 'cookbook-run');
    fs.mkdirSync(path.join(dir, 'iteration_000000'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'metrics.jsonl'), '{"step": 0, "env/all/reward/total": 0.5}\n');
    await api.runs.refresh();
    const row = await waitFor('the run in the Runs view', async () => (await api.runsTree.localRuns()).find((r) => r.run.dir === dir));
    const children = await api.runsTree.getChildren(row);
    assert.deepStrictEqual(children.map((n) => n.kind), ['message']);
    assert.strictEqual(api.runsTree.getTreeItem(children[0]!).label, 'No sampled iterations yet');
  });
});
