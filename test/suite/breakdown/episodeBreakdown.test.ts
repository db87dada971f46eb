// A multi-turn environment run in a real extension host, on the embedded engine: Start GRPO Run on a
// copy of examples/arith-retry (its env file in real Python, one short iteration), then the group
// breakdown of that run with its real webview: the snapshot's rows are episodes (turns, how each
// ended), the env file is named (an env error's link opens it at its line), and each sample the
// panel loads is its transcript — the env's user turns and the model's replies in order, each reply
// with the reward and metrics the env gave it — and the sample documents the diffs open are those
// transcripts, turn by turn. What arith-chat answers is not asserted (its weights change): each
// reward is checked against the env's own rule applied to the reply the transcript shows.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { Redactor } from '../../../src/core/config/redact';
import type { GrpoRunResult } from '../../../src/core/runs/runEvents';
import { breakdownPanels } from '../../../src/vscode/breakdown/breakdownPanels';
import { Log } from '../../../src/vscode/common/log';
import { BreakdownRequests, BreakdownSnapshot } from '../../../src/protocol/breakdownProtocol';
import { episodeView } from '../../../src/protocol/episodeView';
import { EXTENSION_ID, useLocalEngineAndRunsFolder, waitFor } from '../helpers';
import { TransportRecorder } from '../common/recordingTransport';

const RUN_TIMEOUT = 300_000;
const root = path.resolve(__dirname, '../../../..');

/** A copy of examples/arith-retry cut to one iteration of 2 problems × 2 episodes; returns the spec path. */
function writeRetrySpec(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-episode-spec-'));
  const ex = path.join(root, 'examples', 'arith-retry');
  fs.copyFileSync(path.join(ex, 'arith_retry.env.py'), path.join(dir, 'arith_retry.env.py'));
  fs.writeFileSync(path.join(dir, 'train.jsonl'), fs.readFileSync(path.join(ex, 'train.jsonl'), 'utf8').split('\n').slice(0, 4).join('\n') + '\n');
  const spec = JSON.parse(fs.readFileSync(path.join(ex, 'arith-retry.grpo.json'), 'utf8')) as Record<string, unknown>;
  delete spec['$schema'];
  Object.assign(spec, { name: 'retry-view', iterations: 1, groups_per_batch: 2, group_size: 2, eval_every: 0, save_every: 0, dataset: { path: 'train.jsonl' } });
  const file = path.join(dir, 'retry-view.grpo.json');
  fs.writeFileSync(file, JSON.stringify(spec, null, 2) + '\n');
  return file;
}

suite('Environment episodes in the group breakdown', function () {
  this.timeout(RUN_TIMEOUT);
  const suiteState = useLocalEngineAndRunsFolder('tinker-episode-runs-');
  let log: Log;

  suiteSetup(() => {
    log = new Log(new Redactor(), 'Tinker (test)');
  });
  suiteTeardown(() => log.dispose());
  teardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('a multi-turn run from an env spec: the breakdown shows each episode as a transcript with the env’s roles and rewards, and the diffs compare transcripts', async () => {
    const specFile = writeRetrySpec();
    const result = await vscode.commands.executeCommand<GrpoRunResult>('tinker.startGrpoRun', vscode.Uri.file(specFile));
    assert.ok(result, 'the command returns the run result');
    assert.strictEqual(result.status, 'completed', result.error);
    assert.strictEqual(path.dirname(result.runDir), suiteState.runsDir());

    const recorder = new TransportRecorder();
    const extensionUri = vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri;
    const panels = breakdownPanels({ extensionUri, log }, recorder.factory);
    try {
      const panel = await panels.open({ runDir: result.runDir, ref: { iteration: 0, split: 'train' } });
      const transport = recorder.of(panel.panel);
      const snap = await waitFor('the complete snapshot', () => transport.sent.map((m) => BreakdownSnapshot.safeParse(m)).find((r) => r.success && !r.data.loading)?.data, 60_000);
      assert.strictEqual(snap.records.length, 4, '2 problems × 2 episodes');
      assert.strictEqual(snap.envFile, 'arith_retry.env.py', 'the snapshot names the env file');
      for (const s of snap.records) {
        assert.ok(s.episode, `group ${s.group_idx} sample ${s.traj_idx}: the row is an episode`);
        assert.ok(s.episode.turns >= 1 && s.episode.turns <= 2, `1 or 2 turns (max_turns 2), got ${s.episode.turns}`);
      }

      let id = 100;
      for (const s of snap.records) {
        const reqId = ++id;
        await transport.deliver({ type: 'request', id: reqId, method: 'sample', params: { ref: { iteration: 0, split: 'train' }, groupIdx: s.group_idx, trajIdx: s.traj_idx } });
        const reply = transport.ofType<{ type: 'reply'; id: number; ok: boolean; value?: unknown; error?: string }>('reply').find((r) => r.id === reqId);
        assert.ok(reply?.ok, `the sample loads: ${reply?.error}`);
        const full = BreakdownRequests.sample.result.parse(reply.value);
        const t = full.transcript;
        assert.ok(t, 'the sample carries its transcript');
        const v = episodeView(t);
        const where = `group ${s.group_idx} sample ${s.traj_idx}`;
        assert.strictEqual(v.total, s.reward, `${where}: the transcript's total is the sample's reward`);
        assert.strictEqual(v.turns, s.episode!.turns);
        // roles: the env's question first, then per turn the model's reply, the env's "Wrong, try again." between
        const first = v.entries[0];
        assert.ok(first?.kind === 'env' && first.message.role === 'user' && /^What is \d+ \+ \d+\?$/.test(first.message.content), `${where}: the episode opens on the env's question`);
        const [x, y] = first.message.content.match(/\d+/g)!.map(Number);
        const roles = v.entries.map((e) => (e.kind === 'reply' ? 'model' : e.kind === 'env' ? e.message.role : 'reset'));
        assert.deepStrictEqual(roles, v.turns === 1 ? ['user', 'model'] : ['user', 'model', 'user', 'model'], `${where}: ${roles.join(', ')}`);
        const replies = v.entries.filter((e) => e.kind === 'reply');
        replies.forEach((r, i) => {
          assert.ok(r.kind === 'reply');
          assert.strictEqual(r.message.role, 'assistant');
          if (r.stopReason === 'length') {
            assert.strictEqual(r.reward, -0.1, `${where} turn ${i + 1}: a reply cut at max_tokens scores context_overflow_reward`);
            return;
          }
          if (r.parseError !== undefined) {
            assert.strictEqual(r.reward, -1, `${where} turn ${i + 1}: a reply that does not parse scores failed_parse_reward`);
            return;
          }
          // the env's rule (arith_retry.env.py) applied to the reply shown
          const right = r.message.content.trim() === String(x! + y!);
          if (r.done) {
            assert.strictEqual(r.reward, right ? (i === 0 ? 1 : 0.5) : 0, `${where} turn ${i + 1}: the env's reward for ${JSON.stringify(r.message.content)}`);
            assert.deepStrictEqual(r.metrics, [['first_try_correct', right && i === 0 ? 1 : 0], ['second_try_correct', right && i === 1 ? 1 : 0]], `${where}: the env's per-step metrics`);
          } else {
            assert.strictEqual(r.reward, 0, `${where} turn ${i + 1}: a wrong first try scores 0 and goes on`);
            assert.ok(!right);
            const next = v.entries[v.entries.indexOf(r) + 1];
            assert.ok(next?.kind === 'env' && next.message.role === 'user' && next.message.content === 'Wrong, try again.', `${where}: the env answers a wrong try`);
          }
        });
        assert.ok(['completed', 'max_turns', 'max_tokens', 'parse_error'].includes(v.end.stop), `${where}: ended ${v.end.stop}`);
      }

      // an env error's link opens the env file (the spec's copy) at the traceback's line
      await transport.deliver({ type: 'openRewardFile', line: 17 });
      const editor = await waitFor('the env file in an editor', () => vscode.window.visibleTextEditors.find((e) => e.document.uri.fsPath === path.join(path.dirname(specFile), 'arith_retry.env.py')), 30_000);
      assert.strictEqual(editor.selection.active.line, 16, 'at line 17');

      // the best-vs-worst diff opens the two episodes' documents: transcripts, turn by turn
      const opened = await vscode.commands.executeCommand<{ left: string; right: string }>('tinker.compareSamples', { runDir: result.runDir, iteration: 0, groupIdx: 0 });
      assert.ok(opened);
      for (const side of [opened.left, opened.right]) {
        const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(side));
        const text = doc.getText();
        assert.match(text, /\n## episode\nturns: {8}[12]\n/, text);
        assert.match(text, /\n## turn 1\n### user\nWhat is \d+ \+ \d+\?\n### assistant · reward /, text);
        assert.ok(!text.includes('## completion'), 'an episode document is its transcript');
      }
    } finally {
      panels.dispose();
    }
  });
});
