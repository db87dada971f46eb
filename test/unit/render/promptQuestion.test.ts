// The question a group's rows show: the problem's last user message, recorded with each sample; for
// records written before that field, read back out of the rendered prompt of every implemented
// template, and nothing when the template is not recognised.
import * as assert from 'assert';
import { sampleRecords } from '../../../src/core/rollouts/records';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { questionInPrompt, questionOf } from '../../../src/protocol/promptQuestion';
import { getRenderer } from '../../../src/core/render/registry';
import type { Message } from '../../../src/core/render/types';
import type { SampleRecord } from '../../../src/core/runs/sampleRecord';
import { summarizeIteration } from '../../../src/protocol/sampleSchema';
import { buildGroups } from '../../../src/protocol/breakdown';

const CHAT: Message[] = [
  { role: 'system', content: 'Answer with a number.' },
  { role: 'user', content: 'What is 1 + 1?' },
  { role: 'assistant', content: '2' },
  { role: 'user', content: 'What is 96 + 71?\nThink first.' },
];

describe('the question of a prompt', () => {
  it('is the last user message of the problem', () => {
    assert.strictEqual(questionOf(CHAT), 'What is 96 + 71?\nThink first.');
    assert.strictEqual(questionOf([{ role: 'system', content: 's' }]), undefined);
  });

  it('is read back out of a rendered prompt: chatml / qwen3, llama3 and role_colon', () => {
    const chatml = '<|im_start|>system\nAnswer with a number.<|im_end|>\n<|im_start|>user\nWhat is 1 + 1?<|im_end|>\n<|im_start|>assistant\n2<|im_end|>\n<|im_start|>user\nWhat is 96 + 71?\nThink first.<|im_end|>\n<|im_start|>assistant\n';
    assert.strictEqual(questionInPrompt(chatml), 'What is 96 + 71?\nThink first.');
    const llama3 = '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nWhat is 1 + 1?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n2<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWhat is 96 + 71?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n';
    assert.strictEqual(questionInPrompt(llama3), 'What is 96 + 71?');
    const tok = new ByteTokenizer();
    const roleColon = tok.decode(getRenderer('role_colon', tok).buildGenerationPrompt(CHAT));
    assert.strictEqual(questionInPrompt(roleColon), 'What is 96 + 71?\nThink first.');
    const engineChatml = tok.decode(getRenderer('chatml', tok).buildGenerationPrompt(CHAT));
    assert.strictEqual(questionInPrompt(engineChatml), 'What is 96 + 71?\nThink first.');
    assert.strictEqual(questionInPrompt('user: What is 0 + 1?\n'), undefined, 'not a template we render');
  });

  it('is written with every sample record, and the breakdown previews it (records without it: from the prompt, else the prompt)', () => {
    const tok = new ByteTokenizer();
    const renderer = getRenderer('role_colon', tok);
    const written = sampleRecords(
      renderer,
      [
        {
          problem: { id: 'p:1', messages: CHAT, groundTruth: '167' },
          promptTokens: renderer.buildGenerationPrompt(CHAT),
          rollouts: [{ tokens: tok.encode('167'), logprobs: [-0.1, -0.1, -0.1], stopReason: 'stop', response: { message: { role: 'assistant', content: '167' }, termination: 'eos' }, reward: 1, metrics: {} }],
        },
      ],
      [[0]],
    );
    assert.strictEqual(written[0]!.question, 'What is 96 + 71?\nThink first.');

    const record = (group_idx: number, prompt: string, question?: string): SampleRecord => ({
      group_idx,
      traj_idx: 0,
      problem_id: `p:${group_idx}`,
      prompt,
      ...(question !== undefined ? { question } : {}),
      completion: '2',
      content: '2',
      ground_truth: '2',
      completion_tokens: [50],
      logprobs: [-0.5],
      reward: 1,
      advantage: 0,
      stop_reason: 'stop',
      termination: 'eos',
    });
    const rendered = '<|im_start|>user\nWhat is 96 + 71?<|im_end|>\n<|im_start|>assistant\n';
    const summary = summarizeIteration([record(0, rendered, 'What is 96 + 71? (as recorded)'), record(1, rendered), record(2, 'user: What is 0 + 1?\n')]);
    assert.deepStrictEqual(summary.prompts, [
      { group_idx: 0, prompt: rendered, question: 'What is 96 + 71? (as recorded)' },
      { group_idx: 1, prompt: rendered, question: 'What is 96 + 71?' },
      { group_idx: 2, prompt: 'user: What is 0 + 1?\n' },
    ]);
    const groups = buildGroups(summary.records, summary.prompts);
    assert.deepStrictEqual(
      groups.map((g) => [g.question, g.prompt]),
      [
        ['What is 96 + 71? (as recorded)', rendered],
        ['What is 96 + 71?', rendered],
        ['user: What is 0 + 1?\n', 'user: What is 0 + 1?\n'],
      ],
    );
  });
});
