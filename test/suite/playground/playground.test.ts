// The sample playground in a real extension host on the local engine, driven through a recording
// transport (its real webview says ready and gets the messages too): A = tinker-studio/arith-gpt,
// B = the sampler checkpoint of a short training run on the same engine; N samples each, rewards
// from the arithmetic example's reward.py; the rendered prompt and the log-probs on demand; "Save as
// reward example" writes a line the reward CodeLens counts; "Compare A↔B" opens the diff editor on
// tinker-sample: documents; the history is read back by a new panel; a cancel leaves the engine
// (its own record, GET /api/v1/_engine/requests) with no request of the run running.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { Redactor } from '../../../src/core/config/redact';
import { loadRenderer } from '../../../src/core/render';
import { chatToDatum, toWireSftDatum } from '../../../src/core/sft/datums';
import type { ServiceClient } from '../../../src/core/tinker/client';
import { TinkerConnection } from '../../../src/vscode/connection/connection';
import { LocalEngine } from '../../../src/vscode/connection/localEngine';
import { Log } from '../../../src/vscode/common/log';
import type { PlaygroundPanel } from '../../../src/vscode/playground/playgroundPanel';
import { breakdownPanels } from '../../../src/vscode/breakdown/breakdownPanels';
import { presetOf } from '../../../src/vscode/playground/playgroundCommands';
import { openPlayground, PlaygroundPanels, playgroundPanels } from '../../../src/vscode/playground/playgroundPanels';
import { TrustedServers } from '../../../src/vscode/connection/trustedServers';
import { PlaygroundForm, PlaygroundSnapshot, RunView, SampleView, ToWebview } from '../../../src/protocol/playgroundProtocol';
import { readPairsFile } from '../../../src/core/dpo/pairs';
import { preferencesFile } from '../../../src/vscode/dpo/pairsCommands';
import { EXTENSION_ID, MemoryMemento, useLocalEngineAndRunsFolder, waitFor, workspaceRoot } from '../helpers';
import { RecordingTransport, TransportRecorder } from '../common/recordingTransport';

const ARITH = 'tinker-studio/arith-gpt';
const ARITH_CHAT = 'tinker-studio/arith-chat';
const LIMIT = 120_000;

/** The arithmetic reward as the last integer of the completion equal to the ground truth. */
function arithmeticReward(completion: string, groundTruth: string): number {
  const numbers = completion.replace(/,/g, '').match(/-?\d+/g);
  return numbers && Number.parseInt(numbers.at(-1)!, 10) === Number.parseInt(groundTruth, 10) ? 1 : 0;
}

suite('Sample playground', function () {
  this.timeout(600_000);
  const suiteState = useLocalEngineAndRunsFolder('tinker-playground-');
  let log: Log;
  let engine: LocalEngine;
  let connection: TinkerConnection;
  let service: ServiceClient;
  let checkpoint: string;
  let dir: string;
  let rewardFile: string;
  let state: MemoryMemento;

  const services = (memento: vscode.Memento, preferences?: { file(): Promise<string | undefined>; open(): Promise<void> }) => ({
    ...(preferences ? { preferences } : {}),
    extensionUri: vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri,
    log,
    service: () => connection.get(),
    cacheDir: path.join(dir, 'cache'),
    state: memento,
    checkpoints: async () => [{ label: 'short run · final', path: checkpoint }],
    runs: async () => [],
    rewardFiles: async () => [rewardFile],
    python: async () => 'python3',
    trusted: () => vscode.workspace.isTrusted,
  });

  suiteSetup(async () => {
    suiteState.api();
    log = new Log(new Redactor(), 'Tinker (playground test)');
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-playground-engine-'));
    engine = new LocalEngine(ext.extensionPath, vscode.Uri.file(dir), log);
    connection = new TinkerConnection(engine, { get: async () => undefined }, log, '0.0.0-test', new TrustedServers(new MemoryMemento()));
    service = await connection.get();
    // a short run: two supervised steps on arithmetic answers, then its sampler checkpoint
    const { renderer } = await loadRenderer({ model: ARITH, cacheDir: path.join(dir, 'cache') });
    const training = await service.createLoraTrainingClient(ARITH, { rank: 4, seed: 3 });
    const datum = chatToDatum(renderer, [{ role: 'user', content: 'What is 2 + 3?' }, { role: 'assistant', content: '5' }], 'last_assistant_message');
    assert.ok(datum);
    for (let step = 0; step < 2; step++) {
      await (await training.forwardBackward([toWireSftDatum(datum)], 'cross_entropy')).result();
      await (await training.optimStep({ learning_rate: 1e-3 })).result();
    }
    const saved = await (await training.saveWeightsForSampler('playground-final')).result();
    assert.ok(saved.path);
    checkpoint = saved.path;

    const rewardDir = path.join(workspaceRoot(), 'playground-tests');
    fs.rmSync(rewardDir, { recursive: true, force: true });
    fs.mkdirSync(rewardDir, { recursive: true });
    rewardFile = path.join(rewardDir, 'arith_reward.py');
    fs.copyFileSync(path.join(ext.extensionPath, 'examples', 'arithmetic', 'reward.py'), rewardFile);
    await vscode.workspace.getConfiguration('tinker').update('rewardFiles', ['playground-tests/*.py'], vscode.ConfigurationTarget.Global);
    state = new MemoryMemento();
  });

  suiteTeardown(async () => {
    await vscode.workspace.getConfiguration('tinker').update('rewardFiles', undefined, vscode.ConfigurationTarget.Global);
    fs.rmSync(path.join(workspaceRoot(), 'playground-tests'), { recursive: true, force: true });
    connection?.dispose();
    await engine?.stop();
    log?.dispose();
  });

  teardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  async function openPanel(memento: vscode.Memento, preset?: Parameters<PlaygroundPanels['open']>[0], preferences?: Parameters<typeof services>[1]): Promise<{ panels: PlaygroundPanels; panel: PlaygroundPanel; transport: RecordingTransport; snapshot: PlaygroundSnapshot }> {
    const recorder = new TransportRecorder();
    const panels = playgroundPanels(services(memento, preferences), recorder.factory);
    const panel = await panels.open(preset);
    const transport = recorder.of(panel.panel);
    const snapshot = await waitFor('the snapshot', () => transport.sent.map((m) => PlaygroundSnapshot.safeParse(m)).find((r) => r.success)?.data, LIMIT);
    return { panels, panel, transport, snapshot };
  }

  async function runAndWait(transport: RecordingTransport, form: PlaygroundForm): Promise<RunView> {
    const before = transport.ofType('runDone').length;
    await transport.deliver({ type: 'run', form });
    const done = transport.ofType<{ type: 'runDone'; run: unknown }>('runDone');
    assert.strictEqual(done.length, before + 1, 'the run ended before the run message was handled');
    return RunView.parse(done.at(-1)!.run);
  }

  async function reply(transport: RecordingTransport, id: number, method: string, params: unknown): Promise<unknown> {
    await transport.deliver({ type: 'request', id, method, params });
    const r = transport.ofType<{ type: 'reply'; id: number; ok: boolean; value?: unknown; error?: string }>('reply').find((x) => x.id === id);
    assert.ok(r, `a reply to ${method}`);
    assert.ok(r.ok, `${method} failed: ${r.error}`);
    return r.value;
  }

  test('the palette command opens the playground panel with a strict CSP', async () => {
    const api = suiteState.api();
    assert.strictEqual(await vscode.commands.executeCommand('tinker.openPlayground'), true);
    const [panel] = api.playground.all();
    assert.ok(panel, 'a playground panel is open');
    const html = panel.panel.webview.html;
    assert.match(html, /default-src 'none'/);
    assert.match(html, /script-src 'nonce-[^']+'/);
    assert.ok(!/https?:\/\/(?!127)/.test(html.replace(/https:\/\/[^"]*vscode-cdn\.net[^"]*/g, '')), 'no remote origins');
  });

  test('A = arith-gpt, B = a checkpoint of a short run: N samples each, arithmetic rewards with a mean per side, prompt and log-probs on demand, save as example, compare A↔B', async () => {
    const { panels, transport, snapshot } = await openPanel(state, { A: { kind: 'base', model: ARITH }, B: { kind: 'checkpoint', path: checkpoint }, messages: [{ role: 'user', content: 'What is 2 + 3?' }], groundTruth: '5', rewardFile });
    try {
      assert.deepStrictEqual(snapshot.form.B, { kind: 'checkpoint', path: checkpoint }, 'the checkpoint is preselected');
      const form: PlaygroundForm = { ...snapshot.form, params: { temperature: 1, topP: 1, topK: -1, maxTokens: 6, n: 4, seed: 5 } };
      const run = await runAndWait(transport, form);
      assert.strictEqual(run.status, 'done');
      assert.strictEqual(run.rewardNote, undefined);
      for (const side of ['A', 'B'] as const) {
        const r = run.sides[side];
        assert.ok(r, `side ${side}`);
        assert.deepStrictEqual(r.errors, []);
        assert.deepStrictEqual(r.info && [r.info.baseModel, r.info.renderer], [ARITH, 'chatml']);
        assert.deepStrictEqual(r.samples.map((s) => s.index), [0, 1, 2, 3]);
        for (const s of r.samples) assert.strictEqual(s.reward, arithmeticReward(s.text, '5'), `reward of ${JSON.stringify(s.text)}`);
        const mean = r.samples.reduce((a, s) => a + (s.reward ?? 0), 0) / r.samples.length;
        assert.ok(Math.abs((r.meanReward ?? NaN) - mean) < 1e-9, `mean reward of side ${side}`);
      }
      const streamed = transport.ofType<{ type: 'sample'; sample: SampleView }>('sample').filter((m) => m.sample.side === 'B');
      assert.strictEqual(streamed.length, 4, 'each sample was sent as it arrived');

      const prompt = (await reply(transport, 1, 'renderedPrompt', { source: form.A, messages: form.messages })) as { renderer: string; tokens: number; text: string };
      assert.strictEqual(prompt.renderer, 'chatml');
      assert.strictEqual(prompt.text, '<|im_start|>user\nWhat is 2 + 3?<|im_end|>\n<|im_start|>assistant\n');
      assert.strictEqual(prompt.tokens, run.sides.A!.info!.promptTokens);

      const sampleB0 = run.sides.B!.samples[0]!;
      const tokens = (await reply(transport, 2, 'sampleTokens', { side: 'B', index: 0 })) as { tokens: Array<{ text: string; logprob: number | null }> };
      assert.strictEqual(tokens.tokens.length, sampleB0.tokens);
      assert.ok(tokens.tokens.every((t) => typeof t.logprob === 'number' && t.logprob <= 0));

      // save as reward example: a line the reward CodeLens counts
      const examplesFile = rewardFile.replace(/\.py$/, '.examples.jsonl');
      await transport.deliver({ type: 'saveExample', side: 'B', index: 0, expected: sampleB0.reward ?? 0 });
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(examplesFile, 'utf8').trim()), { completion: sampleB0.text, ground_truth: '5', expected: sampleB0.reward ?? 0 });
      const doc = await vscode.workspace.openTextDocument(rewardFile);
      await vscode.window.showTextDocument(doc);
      const lens = async () => ((await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri)) ?? []).map((l) => l.command?.title ?? '');
      const expectedLens = `Test on 1 example — 1 match, mean ${(sampleB0.reward ?? 0).toFixed(2)}`;
      await waitFor(`the CodeLens "${expectedLens}"`, async () => ((await lens()).includes(expectedLens) ? true : undefined), LIMIT);

      // compare A↔B: the diff editor on two tinker-sample: documents
      await transport.deliver({ type: 'compare', left: { side: 'A', index: 1 }, right: { side: 'B', index: 1 } });
      const tab = await waitFor('the diff editor', () => {
        const t = vscode.window.tabGroups.activeTabGroup.activeTab;
        return t?.input instanceof vscode.TabInputTextDiff ? t.input : undefined;
      }, LIMIT);
      assert.strictEqual(tab.original.scheme, 'tinker-sample');
      const left = (await vscode.workspace.openTextDocument(tab.original)).getText();
      const right = (await vscode.workspace.openTextDocument(tab.modified)).getText();
      assert.match(left, new RegExp(`^# playground · side A · sample 1\\nmodel: {7}${ARITH}\\n`));
      assert.match(right, new RegExp(`\\nmodel: {7}${checkpoint.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\n`));
      assert.ok(right.endsWith(`## completion\n${run.sides.B!.samples[1]!.text}\n`));
    } finally {
      panels.dispose();
    }
    // a new panel (as after a window reload) shows the last run and lists it in the history
    const again = await openPanel(state);
    try {
      assert.strictEqual(again.snapshot.run?.status, 'done');
      assert.strictEqual(again.snapshot.run?.sides.B?.samples.length, 4);
      assert.strictEqual(again.snapshot.history.length, 1);
      assert.strictEqual(again.snapshot.form.params.n, 4, 'the parameters are remembered');
    } finally {
      again.panels.dispose();
    }
  });

  test('a conversation with a tool call and its result: rendered by the side’s renderer, sampled, each sample with its parsed reply', async () => {
    // the engine's chat model (256 positions; arith-gpt's 64 do not hold this conversation), chatml with its compact tool format
    const { panels, transport, snapshot } = await openPanel(new MemoryMemento(), { A: { kind: 'base', model: ARITH_CHAT } });
    try {
      const messages: PlaygroundForm['messages'] = [
        { role: 'system', content: 'Tools: add(a, b) - Add two integers.' },
        { role: 'user', content: 'What is 123 + 456?' },
        { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'add', arguments: '{"a": 123, "b": 456}' } }] },
        { role: 'tool', content: '579', name: 'add' },
      ];
      const form: PlaygroundForm = { ...snapshot.form, messages, params: { temperature: 1, topP: 1, topK: -1, maxTokens: 8, n: 3, seed: 11 } };
      const prompt = (await reply(transport, 31, 'renderedPrompt', { source: form.A, messages })) as { renderer: string; text: string };
      assert.strictEqual(prompt.renderer, 'chatml');
      assert.strictEqual(
        prompt.text,
        '<|im_start|>system\nTools: add(a, b) - Add two integers.<|im_end|>\n<|im_start|>user\nWhat is 123 + 456?<|im_end|>\n' +
          '<|im_start|>assistant\n<tool_call>{"name": "add", "arguments": {"a": 123, "b": 456}}</tool_call><|im_end|>\n<|im_start|>tool\n579<|im_end|>\n<|im_start|>assistant\n',
      );
      const run = await runAndWait(transport, form);
      const side = run.sides.A!;
      assert.deepStrictEqual(side.errors, []);
      assert.strictEqual(side.samples.length, 3);
      const { renderer } = await loadRenderer({ model: ARITH_CHAT, cacheDir: path.join(dir, 'cache') });
      for (const s of side.samples) {
        // the host sends the renderer's parse of the sampled tokens (Copy as JSON has the ids), field for field
        await transport.deliver({ type: 'copyJson', side: 'A', index: s.index });
        const copied = JSON.parse(await vscode.env.clipboard.readText()) as { tokens: number[]; message?: unknown };
        assert.strictEqual(copied.tokens.length, s.tokens);
        assert.deepStrictEqual(copied.message, s.message, 'Copy as JSON has the parsed reply');
        assert.ok(s.message, `sample ${s.index} has its parsed reply`);
        const response = renderer.parseResponse(copied.tokens);
        assert.strictEqual(s.termination, response.termination);
        const parsed = response.message;
        assert.strictEqual(s.message.content, parsed.content);
        assert.deepStrictEqual(s.message.tool_calls, parsed.tool_calls);
        assert.deepStrictEqual(s.message.unparsed_tool_calls, parsed.unparsed_tool_calls);
      }
      // the form with the call and its result is what a reload restores
      assert.deepStrictEqual(RunView.parse(run).form.messages, messages);
    } finally {
      panels.dispose();
    }
  });

  test('Open in Playground on a checkpoint (that checkpoint against its run’s base model, the run’s reward file) and on a run (its latest sampler checkpoint)', async () => {
    const api = suiteState.api();
    const runDir = path.join(suiteState.runsDir(), 'arith-short');
    fs.mkdirSync(runDir, { recursive: true });
    fs.writeFileSync(path.join(runDir, 'config.json'), JSON.stringify({ model_name: ARITH, reward: { file: rewardFile } }));
    const older = 'tinker://older/sampler_weights/000010';
    fs.writeFileSync(
      path.join(runDir, 'checkpoints.jsonl'),
      [{ name: '000010', batch: 10, sampler_path: older }, { name: 'final', batch: 20, final: true, state_path: 'tinker://x/weights/final', sampler_path: checkpoint }].map((c) => JSON.stringify(c)).join('\n') + '\n',
    );
    await api.runs.refresh();
    const runNode = await waitFor('the run in the Checkpoints view', async () => (await api.checkpointsTree.getChildren()).find((n) => n.kind === 'run' && n.run.dir === runDir), LIMIT);
    const [finalNode, olderNode] = await api.checkpointsTree.getChildren(runNode);
    assert.ok(finalNode && olderNode);
    const expected = { A: { kind: 'base', model: ARITH }, B: { kind: 'checkpoint', path: checkpoint }, rewardFile };
    assert.deepStrictEqual(await presetOf(finalNode, path.join(dir, 'cache')), expected);
    assert.deepStrictEqual(await presetOf(runNode, path.join(dir, 'cache')), expected, 'a run opens its latest sampler checkpoint');
    assert.deepStrictEqual(await presetOf(olderNode, path.join(dir, 'cache')), { ...expected, B: { kind: 'checkpoint', path: older } });
    const [statePath, samplerPath] = await api.checkpointsTree.getChildren(finalNode);
    assert.deepStrictEqual(await presetOf(samplerPath, path.join(dir, 'cache')), expected);
    await assert.rejects(presetOf(statePath, path.join(dir, 'cache')), /is a training state; the playground samples sampler weights/);
    assert.strictEqual(await vscode.commands.executeCommand('tinker.openInPlayground', olderNode), true);

    // a sample's problem (the breakdown panel): its conversation and ground truth, from the run's spec
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const specDir = path.join(path.dirname(rewardFile), 'arith');
    fs.cpSync(path.join(ext.extensionPath, 'examples', 'arithmetic'), specDir, { recursive: true });
    const problemRun = path.join(suiteState.runsDir(), 'arith-problem');
    fs.mkdirSync(problemRun, { recursive: true });
    fs.writeFileSync(path.join(problemRun, 'config.json'), JSON.stringify({ model_name: ARITH, spec_file: path.join(specDir, 'arith.grpo.json'), reward: { file: 'reward.py' } }));
    const trainLine = fs.readFileSync(path.join(specDir, 'train.jsonl'), 'utf8').split('\n')[6]!;
    const row = JSON.parse(trainLine) as { question: string; answer: number };
    const fromSample = await presetOf({ runDir: problemRun, problemId: 'train.jsonl:7' }, path.join(dir, 'cache'));
    assert.deepStrictEqual(fromSample, { messages: [{ role: 'user', content: row.question }], groundTruth: String(row.answer), rewardFile: path.join(specDir, 'reward.py') });
    // the breakdown panel's "Open its prompt in the playground" opens the window's playground
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await waitFor('no playground panel', () => (api.playground.all().length === 0 ? true : undefined), LIMIT);
    const recorder = new TransportRecorder();
    const breakdowns = breakdownPanels({ extensionUri: ext.extensionUri, log }, recorder.factory);
    try {
      const breakdown = await breakdowns.open({ runDir: problemRun });
      await recorder.of(breakdown.panel).deliver({ type: 'openInPlayground', problemId: 'train.jsonl:7' });
      assert.strictEqual(api.playground.all().length, 1, 'the playground opened');
    } finally {
      breakdowns.dispose();
    }

    // the preset reaches an open panel's form
    const { panels, transport } = await openPanel(new MemoryMemento());
    try {
      await openPlayground(panels, await presetOf(olderNode, path.join(dir, 'cache')));
      const form = transport.ofType<{ type: 'form'; form: PlaygroundForm }>('form').at(-1)?.form;
      assert.deepStrictEqual(form && [form.A, form.B, form.rewardFile], [expected.A, { kind: 'checkpoint', path: older }, rewardFile]);
    } finally {
      panels.dispose();
    }
  });

  test('"B better" on sampled A/B appends the pair to the file named by tinker.preferencesFile, with its provenance; it reads back as a DPO pair', async () => {
    const rel = 'playground-tests/prefs/preferences.jsonl';
    const file = path.join(workspaceRoot(), rel);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
    await vscode.workspace.getConfiguration('tinker').update('preferencesFile', rel, vscode.ConfigurationTarget.Global);
    // the extension's own resolution of the setting (never asking: the setting is set)
    const preferences = { file: () => preferencesFile(false), open: async () => undefined };
    const messages: PlaygroundForm['messages'] = [{ role: 'user', content: 'What is 47 + 38?' }];
    const { panels, transport, snapshot } = await openPanel(new MemoryMemento(), { A: { kind: 'base', model: ARITH }, B: { kind: 'checkpoint', path: checkpoint }, messages, groundTruth: '85', rewardFile }, preferences);
    try {
      const params = { temperature: 1, topP: 1, topK: -1, maxTokens: 6, n: 4, seed: 17 };
      const run = await runAndWait(transport, { ...snapshot.form, params });
      assert.strictEqual(run.status, 'done');
      // an A sample and a B sample that differ (a pair of equal completions is refused: it teaches nothing)
      const candidates = run.sides.A!.samples.flatMap((x) => run.sides.B!.samples.filter((y) => y.text !== x.text).map((y) => [x, y] as const));
      assert.ok(candidates.length > 0, `an A sample differing from a B sample (A: ${JSON.stringify(run.sides.A!.samples.map((x) => x.text))}, B: ${JSON.stringify(run.sides.B!.samples.map((x) => x.text))})`);
      const [a, b] = candidates.at(-1)!;

      await transport.deliver({ type: 'preference', better: 'B', A: a.index, B: b.index });
      const saved = ToWebview.parse(transport.ofType('preferenceSaved').at(-1));
      assert.deepStrictEqual(saved, { type: 'preferenceSaved', file, line: 1, pairs: 1 });
      assert.ok(fs.existsSync(file), `the pair landed in ${rel}`);
      const lines = fs.readFileSync(file, 'utf8').split('\n');
      assert.strictEqual(lines.length, 2, 'one JSON line and its final newline');
      // read back with the parser DPO runs use (the pairs format's zod schema)
      const read = await readPairsFile(file, 'preferences.jsonl', 'stop');
      assert.deepStrictEqual(read.skipped, []);
      assert.strictEqual(read.pairs.length, 1);
      const pair = read.pairs[0]!;
      assert.deepStrictEqual(pair.prompt, messages);
      assert.deepStrictEqual(pair.chosen, [{ role: 'assistant', content: b.text }], 'chosen: the B sample');
      assert.deepStrictEqual(pair.rejected, [{ role: 'assistant', content: a.text }], 'rejected: the A sample');
      const source = pair.meta?.source as Record<string, unknown>;
      assert.ok(source, 'the provenance is kept');
      const { time, ...rest } = source;
      assert.deepStrictEqual(rest, {
        tool: 'playground',
        chosen: { side: 'B', model: checkpoint, sample: b.index, reward: b.reward },
        rejected: { side: 'A', model: ARITH, sample: a.index, reward: a.reward },
        sampling: params,
        ground_truth: '85',
        run: run.id,
      });
      assert.ok(typeof time === 'string' && Math.abs(Date.parse(time) - Date.now()) < 3_600_000, `a recent ISO time (${String(time)})`);

      // "A better" on the same two samples: a second line, the sides swapped
      await transport.deliver({ type: 'preference', better: 'A', A: a.index, B: b.index });
      const second = ToWebview.parse(transport.ofType('preferenceSaved').at(-1));
      assert.deepStrictEqual(second, { type: 'preferenceSaved', file, line: 2, pairs: 2 });
      const line2 = JSON.parse(fs.readFileSync(file, 'utf8').split('\n')[1]!) as { source: { chosen: { side: string }; rejected: { side: string } } };
      assert.deepStrictEqual([line2.source.chosen.side, line2.source.rejected.side], ['A', 'B']);
    } finally {
      panels.dispose();
      await vscode.workspace.getConfiguration('tinker').update('preferencesFile', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  test('cancel stops the run and leaves no request of it running on the engine (its own record)', async () => {
    const { url, apiKey } = await engine.ensureStarted();
    const requests = async () => (await (await fetch(`${url}/api/v1/_engine/requests`, { headers: { 'X-API-Key': apiKey } })).json()) as { pending: number; issued: number };
    const before = await requests();
    assert.strictEqual(before.pending, 0);
    const { panels, transport } = await openPanel(new MemoryMemento());
    try {
      const n = 64;
      const form: PlaygroundForm = {
        messages: [{ role: 'user', content: 'Count to a hundred.' }],
        A: { kind: 'base', model: ARITH },
        B: { kind: 'checkpoint', path: checkpoint },
        params: { temperature: 1, topP: 1, topK: -1, maxTokens: 256, n },
      };
      const running = transport.deliver({ type: 'run', form });
      await waitFor('the first sample', () => (transport.ofType('sample').length > 0 ? true : undefined), LIMIT);
      await transport.deliver({ type: 'cancel' });
      await running;
      const done = RunView.parse(transport.ofType<{ type: 'runDone'; run: unknown }>('runDone').at(-1)!.run);
      assert.strictEqual(done.status, 'cancelled');
      const seen = (done.sides.A?.samples.length ?? 0) + (done.sides.B?.samples.length ?? 0);
      assert.ok(seen < 2 * n, `the run stopped early (${seen} of ${2 * n} samples)`);
      const after = await waitFor('the engine to have no request pending', async () => {
        const r = await requests();
        return r.pending === 0 ? r : undefined;
      }, LIMIT);
      // sampled + abandoned in flight (at most 8 per side) — the rest were never submitted
      assert.ok(after.issued - before.issued <= seen + 16, `the engine got ${after.issued - before.issued} requests for ${seen} samples`);
    } finally {
      panels.dispose();
    }
  });
});
