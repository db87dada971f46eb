// A sample as the diff editor shows it: header values on lines of their own, then prompt and completion.
import * as assert from 'assert';
import { sampleText } from '../../../src/core/runs/sampleText';

describe('sample text for the diff editor', () => {
  it('renders the header, the reward error, the prompt and the completion', () => {
    const text = sampleText(
      { runDir: '/runs/a', iteration: 3, split: 'train', groupIdx: 2, trajIdx: 5 },
      { group_idx: 2, traj_idx: 5, problem_id: 'p:2', prompt: 'user: 2+2?\n', completion: '5', content: '5', ground_truth: '4', completion_tokens: [53], logprobs: [-0.3], reward: 0, advantage: -0.5, stop_reason: 'stop', termination: 'eos', reward_error: { kind: 'exception', message: 'boom', line: 7 } },
    );
    assert.strictEqual(
      text,
      ['# training iteration 3 · group 2 · sample 5', 'problem:      p:2', 'reward:       0', 'advantage:    -0.5', 'stop reason:  stop (eos)', 'tokens:       1', 'ground truth: 4', 'reward error: exception: boom (line 7)', '', '## prompt', 'user: 2+2?', '', '## completion', '5', ''].join('\n'),
    );
  });
});
