// The reward-function editor as a person sees it: a reward file with a subtle bug opened from Quick
// Open shows "Test on 5 examples — 2 of 3 match, mean 0.80" above the function (its examples file's three
// and one completion per group of the run that used it), a warning squiggle on a
// networking import, the mismatch in the Problems view, the examples in a hover, and a dry run of a
// run's samples from the command palette.
import fs from 'node:fs';
import path from 'node:path';
import { quickOpen, runCommand } from './palette.mjs';

export const settings = { 'tinker.rewardFiles': ['rewards/*.py'], 'files.autoSave': 'off' };

// "4" in "It is 14" is true: the bug the examples catch
const REWARD = `import socket


def compute_reward(completion, ground_truth):
    return 1.0 if ground_truth in completion else 0.0
`;
const EXAMPLES = [
  { completion: 'The answer is 4', ground_truth: '4', expected: 1 },
  { completion: 'It is 14', ground_truth: '4', expected: 0 },
  { completion: 'No idea', ground_truth: '4', expected: 0 },
];

function writeFiles(workspace) {
  const dir = path.join(workspace, 'rewards');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'contains.py');
  fs.writeFileSync(file, REWARD);
  fs.writeFileSync(path.join(dir, 'contains.examples.jsonl'), EXAMPLES.map((e) => JSON.stringify(e)).join('\n') + '\n');
  // a finished run that used this reward file: two groups of four samples
  const run = path.join(workspace, 'runs', 'contains-run');
  fs.mkdirSync(path.join(run, 'iteration_000000'), { recursive: true });
  fs.writeFileSync(path.join(run, 'config.json'), JSON.stringify({ model_name: 'tinker-studio/arith-gpt', reward: { file } }));
  const groups = [
    ['4', '14', '4', '40'],
    ['7', '17', '27', 'seven'],
  ];
  // whole sample records, as a run writes them (src/protocol/sampleSchema.ts)
  const lines = groups.flatMap((g, gi) =>
    g.map((content, t) => {
      const truth = gi === 0 ? '4' : '7';
      const reward = content === truth ? 1 : 0;
      return JSON.stringify({ group_idx: gi, traj_idx: t, problem_id: `train.jsonl:${gi + 1}`, prompt: 'What is it?', completion: content, content, ground_truth: truth, completion_tokens: [], logprobs: [], reward, advantage: 0, stop_reason: 'stop', termination: 'stop_sequence' });
    }),
  );
  fs.writeFileSync(path.join(run, 'iteration_000000', 'train_samples.jsonl'), lines.join('\n') + '\n');
}

export const tests = [
  {
    name: 'reward editor: a reward file shows its examples result in a CodeLens, and its diagnostics',
    async run({ page, open, workspace, screenshot }) {
      writeFiles(workspace);
      await open();
      await quickOpen(page, 'contains.py');
      await page.locator('.codelens-decoration', { hasText: 'Test on 5 examples — 2 of 3 match, mean 0.80' }).waitFor({ timeout: 90_000 });
      await page.locator('.codelens-decoration', { hasText: 'Dry Run' }).waitFor({ timeout: 10_000 });
      await page.locator('.squiggly-warning').first().waitFor({ timeout: 30_000 });
      // the Problems view: the import warning and the mismatch on the examples file
      await runCommand(page, 'Problems: Focus on Problems View');
      const markers = page.locator('.markers-panel');
      await markers.getByText('the module "socket" reaches the network', { exact: false }).first().waitFor({ timeout: 30_000 });
      await markers.getByText('expected 0, got 1', { exact: false }).first().waitFor({ timeout: 30_000 });
      await screenshot('reward-codelens');
    },
  },
  {
    name: 'reward editor: hovering the function shows every example and its reward',
    async run({ page, screenshot }) {
      const name = page.locator('.view-line span', { hasText: /^compute_reward$/ }).first();
      await name.waitFor({ timeout: 15_000 });
      await name.hover();
      const hover = page.locator('.monaco-hover', { hasText: 'It is 14' });
      await hover.waitFor({ timeout: 30_000 });
      await hover.getByText('✗').first().waitFor({ timeout: 10_000 });
      await screenshot('reward-hover');
      await page.keyboard.press('Escape');
    },
  },
  {
    name: "reward editor: Dry Run Reward from the palette re-scores a run's samples and shows the no-signal fractions",
    async run({ page, screenshot }) {
      await page.locator('.tab', { hasText: 'contains.py' }).click();
      await runCommand(page, 'Tinker: Dry Run Reward');
      const palette = page.locator('.quick-input-widget');
      await palette.locator('.monaco-list-row', { hasText: 'contains-run' }).first().waitFor({ timeout: 30_000 });
      await page.keyboard.press('Enter');
      // group 0 ("4" in all four) is all good, group 1 mixed: 50% / 50%; the report opens beside the code
      await page.locator('.tab', { hasText: 'Dry run of contains.py' }).first().waitFor({ timeout: 60_000 });
      await page.locator('.view-line', { hasText: 'No-signal fractions' }).first().waitFor({ timeout: 30_000 });
      await page.locator('.view-line', { hasText: '| all good | 50.0% |' }).first().waitFor({ timeout: 10_000 });
      await page.locator('.view-line', { hasText: '| mixed | 50.0% |' }).first().waitFor({ timeout: 10_000 });
      await screenshot('reward-dry-run');
    },
  },
];
