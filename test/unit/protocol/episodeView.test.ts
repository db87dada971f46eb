// An environment episode as the views show it (src/protocol/episodeView.ts): the transcript's entries
// in order with the environment's messages apart from the model's replies, each reply with its step's
// reward, metrics and parse error; the totals and why it ended; the text the sample diffs print turn by
// turn; the summary the breakdown's list carries; the evidence the run doctor reads; the text search
// over a transcript. Also the fixture the UI test shows (test/fixtures/samples/arith-tools-episodes.jsonl,
// written by scripts/make-episode-fixture.mjs with the real arith-tools environment).
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { episodeEnd, episodeEvidence, episodeText, episodeView } from '../../../src/protocol/episodeView';
import { episodeSummary, summarizeSample, type EpisodeTranscript, type SampleRecord } from '../../../src/protocol/sampleSchema';
import { searchGroups, searchIndex } from '../../../src/protocol/breakdown';
import { parseSamples } from '../../../src/core/runs/sampleRecord';
import { sampleText } from '../../../src/core/runs/sampleText';

const FIXTURE = path.resolve(__dirname, '../../../../test/fixtures/samples/arith-tools-episodes.jsonl');

/** A calculator episode: a tool call answered by a tool result, then a malformed call, then a wrong answer at max_turns. */
const transcript: EpisodeTranscript = {
  turns: [
    {
      new_messages: [
        { role: 'system', content: 'Tools: add(a, b) - Add two integers.' },
        { role: 'user', content: 'What is 123 + 456?' },
      ],
      reply: { role: 'assistant', content: '', tool_calls: [{ type: 'function', id: 'call_1', function: { name: 'add', arguments: '{"a": 123, "b": 456}' } }] },
      ob_tokens: 80,
      ac_tokens: 40,
      stop_reason: 'stop',
      reward: 0,
      episode_done: false,
      metrics: { z_last: 2, a_first: 1 },
    },
    {
      new_messages: [{ role: 'tool', content: '579', tool_call_id: 'call_1', name: 'add' }],
      reply: { role: 'assistant', content: '', unparsed_tool_calls: [{ raw_text: '<tool_call>{"name": "add"', error: 'not JSON' }] },
      ob_tokens: 130,
      ac_tokens: 25,
      stop_reason: 'stop',
      reward: -1,
      episode_done: false,
      metrics: { parse_error: 1 },
      parse_error: 'tool call did not parse: not JSON',
    },
    {
      new_messages: [{ role: 'user', content: 'Try again.' }],
      reset: true,
      reply: { role: 'assistant', content: '569', thinking: 'hmm' },
      ob_tokens: 160,
      ac_tokens: 4,
      stop_reason: 'stop',
      reward: 0.25,
      episode_done: true,
      metrics: { 'stop/max_turns': 1 },
      logs: { note: 'close', n: 3 },
    },
  ],
  tools: [{ name: 'add', description: 'Add two integers.', parameters: {} }],
  stop: 'max_turns',
  group_reward: 0.5,
  group_metrics: { judged: 1 },
};

function record(t: EpisodeTranscript | undefined, over: Partial<SampleRecord> = {}): SampleRecord {
  return {
    group_idx: 0,
    traj_idx: 0,
    problem_id: 'p:0',
    prompt: 'P',
    completion: '569',
    content: '569',
    ground_truth: '579',
    completion_tokens: [1, 2],
    logprobs: [-1, -1],
    reward: -0.25,
    advantage: 0,
    stop_reason: 'stop',
    termination: t?.stop ?? 'eos',
    ...(t ? { transcript: t } : {}),
    ...over,
  };
}

describe('episode view', () => {
  it('lists the environment’s messages and the model’s replies in order, each reply with its step', () => {
    const v = episodeView(transcript);
    assert.deepStrictEqual(
      v.entries.map((e) => (e.kind === 'reply' ? `${e.turn}:reply:${e.reward}` : e.kind === 'env' ? `${e.turn}:${e.message.role}` : `${e.turn}:reset`)),
      ['1:system', '1:user', '1:reply:0', '2:tool', '2:reply:-1', '3:reset', '3:user', '3:reply:0.25'],
    );
    const replies = v.entries.filter((e) => e.kind === 'reply');
    assert.deepStrictEqual(replies[0]!.kind === 'reply' && replies[0]!.metrics, [['a_first', 1], ['z_last', 2]], 'metrics sorted by name');
    assert.strictEqual(replies[1]!.kind === 'reply' && replies[1]!.parseError, 'tool call did not parse: not JSON');
    assert.ok(replies[0]!.kind === 'reply' && replies[0]!.parseError === undefined);
    const last = replies[2]!;
    assert.ok(last.kind === 'reply');
    assert.deepStrictEqual(last.logs, [['n', '3'], ['note', 'close']]);
    assert.strictEqual(last.done, true);
    assert.strictEqual(last.acTokens, 4);
    assert.strictEqual(last.message.thinking, 'hmm');
  });

  it('totals: step rewards plus the group reward, turns, parse errors, tool calls, tools and why it ended', () => {
    const v = episodeView(transcript);
    assert.strictEqual(v.turns, 3);
    assert.strictEqual(v.stepRewards, -0.75);
    assert.strictEqual(v.groupReward, 0.5);
    assert.strictEqual(v.total, -0.25);
    assert.deepStrictEqual(v.groupMetrics, [['judged', 1]]);
    assert.strictEqual(v.parseErrors, 1);
    assert.strictEqual(v.toolCalls, 1);
    assert.deepStrictEqual(v.tools, ['add']);
    assert.deepStrictEqual(v.end, episodeEnd('max_turns'));
    assert.strictEqual(v.end.label, 'max_turns');
  });

  it('names every way an episode ends, and passes an unknown one through', () => {
    for (const [stop, label] of [['completed', 'done'], ['max_turns', 'max_turns'], ['parse_error', 'parse error'], ['context_overflow', 'context overflow'], ['max_tokens', 'reply cut off'], ['env_error', 'env error']] as const) {
      assert.strictEqual(episodeEnd(stop).label, label);
      assert.ok(episodeEnd(stop).explanation.length > 10);
    }
    assert.deepStrictEqual(episodeEnd('eaten_by_grue'), { stop: 'eaten_by_grue', label: 'eaten_by_grue', explanation: 'the episode ended: eaten_by_grue' });
  });

  it('an episode that failed before its first reply has no entries and a total of its group reward', () => {
    const v = episodeView({ turns: [], stop: 'env_error', group_reward: 0, group_metrics: {} });
    assert.deepStrictEqual(v.entries, []);
    assert.strictEqual(v.turns, 0);
    assert.strictEqual(v.total, 0);
    assert.strictEqual(v.end.label, 'env error');
  });

  it('the text of the sample diffs: the episode’s figures, then each turn with its messages and the scored reply', () => {
    assert.deepStrictEqual(episodeText(transcript), [
      '## episode',
      'turns:        3',
      `ended:        max_turns (${episodeEnd('max_turns').explanation})`,
      'step rewards: -0.75',
      'group reward: 0.5 (judged=1)',
      'total:        -0.25',
      'tools:        add',
      '',
      '## turn 1',
      '### system',
      'Tools: add(a, b) - Add two integers.',
      '### user',
      'What is 123 + 456?',
      '### assistant · reward 0',
      'metrics: a_first=1, z_last=2',
      '#### tool call 1: add  · id call_1\n  {\n    "a": 123,\n    "b": 456\n  }',
      '',
      '## turn 2',
      '### tool result of add · id call_1\n579',
      '### assistant · reward -1',
      'metrics: parse_error=1',
      '⚠ parse error: tool call did not parse: not JSON',
      '#### ⚠ malformed tool call 1: not JSON\n  <tool_call>{"name": "add"',
      '',
      '## turn 3',
      '(the environment rewrote the conversation: a new datum starts here)',
      '### user',
      'Try again.',
      '### assistant · reward +0.25 · episode done',
      'metrics: stop/max_turns=1',
      '#### thinking\nhmm\n#### answer\n569',
    ]);
  });

  it('a sample document of an episode is its transcript (two episodes diff turn by turn); a single-turn sample keeps prompt and completion', () => {
    const a = { runDir: '/runs/r', iteration: 2, split: 'eval' as const, groupIdx: 0, trajIdx: 0 };
    const text = sampleText(a, record(transcript));
    assert.ok(text.includes('\n## turn 1\n### system\n'), text);
    assert.ok(text.includes('\n## turn 3\n'));
    assert.ok(!text.includes('## prompt') && !text.includes('## completion'), 'the transcript replaces prompt and completion');
    assert.ok(text.startsWith('# holdout evaluation iteration 2 · group 0 · sample 0\nproblem:      p:0\nreward:       -0.25\n'));
    const single = sampleText(a, record(undefined));
    assert.ok(single.includes('\n## prompt\nP\n\n## completion\n569\n'), single);
    assert.ok(!single.includes('## turn'));
  });

  it('the summary the breakdown’s list carries, and none for a single-turn sample', () => {
    assert.deepStrictEqual(episodeSummary(transcript), { turns: 3, stop: 'max_turns', parse_errors: 1, tool_calls: 1, first_parse_error: 'tool call did not parse: not JSON' });
    assert.deepStrictEqual(summarizeSample(record(transcript)).episode, episodeSummary(transcript));
    assert.strictEqual(summarizeSample(record(undefined)).episode, undefined);
    assert.strictEqual('transcript' in summarizeSample(record(transcript)), false, 'the transcript stays on the host');
  });

  it('the doctor’s evidence: episodes, max_turns endings, replies, parse errors, env errors with the first one', () => {
    const failed = record({ turns: [], stop: 'env_error', group_reward: 0, group_metrics: {} }, { traj_idx: 1, reward: 0, reward_error: { kind: 'exception', message: 'step (turn 1): ValueError: bad', line: 12 } });
    const done = record({ ...transcript, stop: 'completed' }, { traj_idx: 2 });
    const summaries = [record(transcript), failed, done].map(summarizeSample);
    assert.deepStrictEqual(episodeEvidence(summaries, 'calc.env.py'), {
      episodes: 3,
      maxTurns: 1,
      replies: 6,
      parseErrors: 2,
      envErrors: 1,
      firstParseError: 'tool call did not parse: not JSON',
      firstEnvError: { kind: 'exception', message: 'step (turn 1): ValueError: bad', line: 12 },
      envFile: 'calc.env.py',
    });
    assert.strictEqual(episodeEvidence([record(undefined)].map(summarizeSample)), undefined, 'single-turn samples are no episodes');
  });

  it('the text search looks in every message of a transcript, not only the last reply', () => {
    const index = searchIndex([record(transcript), record(undefined, { group_idx: 1, completion: 'plain' })]);
    assert.deepStrictEqual(searchGroups(index, 'try again'), [0]);
    assert.deepStrictEqual(searchGroups(index, '"a": 123'), [0], 'tool call arguments');
    assert.deepStrictEqual(searchGroups(index, '<tool_call>{"name"'), [0], 'a malformed call as written');
    assert.deepStrictEqual(searchGroups(index, 'plain'), [1]);
  });

  it('the UI test’s fixture: real arith-tools episodes whose records parse and whose totals are the records’ rewards', () => {
    const read = parseSamples(fs.readFileSync(FIXTURE, 'utf8'), FIXTURE);
    assert.deepStrictEqual(read.problems, []);
    assert.strictEqual(read.records.length, 12);
    for (const r of read.records) {
      assert.ok(r.transcript, 'every record is an episode');
      const v = episodeView(r.transcript);
      assert.strictEqual(v.total, r.reward, `group ${r.group_idx} sample ${r.traj_idx}: the total is the record's reward`);
      assert.strictEqual(v.entries.filter((e) => e.kind === 'reply').length, v.turns);
    }
    const stops = read.records.map((r) => r.transcript!.stop);
    assert.deepStrictEqual([...new Set(stops)].sort(), ['completed', 'env_error', 'max_turns']);
    const failed = read.records.filter((r) => r.reward_error);
    assert.strictEqual(failed.length, 3);
    assert.match(failed[0]!.reward_error!.traceback ?? '', /File "arith_tools\.env\.py", line \d+/);
    const ev = episodeEvidence(read.records.map(summarizeSample), 'arith_tools.env.py')!;
    assert.ok(ev.parseErrors >= 2 && ev.maxTurns >= 4 && ev.envErrors === 3);
  });
});
