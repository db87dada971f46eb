// Steps shared by transcript-light.ui.mjs and transcript-dark.ui.mjs: an environment run's iteration in
// the group breakdown. The run is a fixture (test/fixtures/samples/arith-tools-episodes.jsonl: episodes
// of the real examples/arith-tools environment with a scripted model, scripts/make-episode-fixture.mjs),
// so the screenshots are the same on every machine. The breakdown is opened through "Tinker: Show
// Iteration"; the run doctor names the env error (file and line), the episodes at max_turns and the
// parse failures; an episode is shown as a transcript (the environment's user and tool turns apart from
// the model's, each reply with its step's reward and metrics); another is reached from the keyboard and
// shows its parse errors; the failed episode shows its traceback; best vs worst diffs turn by turn.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { roomForEditors, showFirstIteration, webviewWith } from './grpo-steps.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUN = 'arith-tools-env';

function writeEpisodeRun(workspace) {
  const dir = path.join(workspace, 'runs', RUN);
  fs.mkdirSync(path.join(dir, 'iteration_000000'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_name: 'tinker-studio/arith-chat', renderer_name: 'chatml', env: { file: 'arith_tools.env.py', max_turns: 3, terminate_on_parse_error: false } }));
  fs.writeFileSync(path.join(dir, 'metrics.jsonl'), '{"step": 0, "env/all/reward/total": 0.0833}\n');
  fs.copyFileSync(path.join(root, 'test/fixtures/samples/arith-tools-episodes.jsonl'), path.join(dir, 'iteration_000000', 'train_samples.jsonl'));
}

/** The text of the selected sample's detail pane's transcript turns: `role|role|…` per turn. */
async function turnRoles(frame) {
  return frame.locator('#detail .ep-turn').evaluateAll((turns) =>
    turns.map((t) => [...t.querySelectorAll('.ep-msg')].map((m) => (m.classList.contains('ep-model') ? 'model' : m.className.match(/ep-role-(\w+)/)?.[1] ?? '?')).join('|')),
  );
}

export function transcriptTests(suffix) {
  return [
    {
      name: `transcript${suffix}: an episode in the breakdown is a transcript with the env's turns apart from the model's, each reply scored; the doctor knows episodes`,
      async run({ page, open, workspace, screenshot }) {
        writeEpisodeRun(workspace);
        const frame = await showFirstIteration(page, open, RUN);
        // the doctor: the env error with its file and line, the episodes at max_turns, the parse failures
        await frame.locator('.finding[data-finding="env-errors"]', { hasText: 'arith_tools.env.py:19' }).waitFor({ timeout: 30_000 });
        await frame.locator('.finding[data-finding="episodes-max-turns"]').waitFor({ timeout: 5_000 });
        await frame.locator('.finding[data-finding="parse-errors"]').waitFor({ timeout: 5_000 });
        await frame.locator('#f-error-label', { hasText: 'has env error' }).waitFor({ timeout: 5_000 });
        await frame.locator('.row.group').first().click();
        await frame.locator('.row.sample').first().waitFor({ timeout: 15_000 });
        // the rows say each episode's turns and how it ended
        await frame.locator('.row.sample .flag', { hasText: '2 turns' }).first().waitFor({ timeout: 15_000 });
        await frame.locator('.row.sample .flag.end', { hasText: 'max_turns' }).first().waitFor({ timeout: 15_000 });
        await frame.locator('.row.sample .flag.warning', { hasText: '2 parse errors' }).first().waitFor({ timeout: 15_000 });
        await frame.locator('.row.sample').first().click();
        const transcript = frame.locator('#detail .transcript');
        await transcript.waitFor({ timeout: 30_000 });
        await transcript.locator('.ep-summary', { hasText: 'total reward +1' }).waitFor({ timeout: 5_000 });
        await transcript.locator('.ep-summary .ep-end', { hasText: 'done' }).waitFor({ timeout: 5_000 });
        const roles = await turnRoles(frame);
        if (JSON.stringify(roles) !== JSON.stringify(['system|user|model', 'tool|model'])) throw new Error(`unexpected turns: ${JSON.stringify(roles)}`);
        // the first reply: a formatted tool call scored 0; the second: the answer scored 1 with the env's metrics
        const replies = transcript.locator('.ep-model');
        await replies.nth(0).locator('.msg-tool-call .msg-tool-name', { hasText: 'add' }).waitFor({ timeout: 5_000 });
        await replies.nth(0).locator('.ep-reward', { hasText: 'reward 0' }).waitFor({ timeout: 5_000 });
        await replies.nth(1).locator('.ep-reward', { hasText: 'reward +1' }).waitFor({ timeout: 5_000 });
        await replies.nth(1).locator('.ep-metric', { hasText: 'correct' }).first().waitFor({ timeout: 5_000 });
        await transcript.locator('.ep-role-tool .msg-tool-result', { hasText: 'Tool result of add' }).waitFor({ timeout: 5_000 });
        await frame.locator('.row.group .flag.negative', { hasText: '3 env errors' }).waitFor({ timeout: 5_000 });
        await roomForEditors(page);
        // the transcript at the top of the detail pane, so the screenshot shows its turns
        await frame.locator('#detail').evaluate((d) => {
          d.scrollTop += d.querySelector('.episode > h3').getBoundingClientRect().top - d.getBoundingClientRect().top;
        });
        await screenshot(`episode-transcript${suffix}`);
      },
    },
    {
      name: `transcript${suffix}: the next episode from the keyboard shows its parse errors; the failed episode its traceback`,
      async run({ page, screenshot }) {
        const frame = await webviewWith(page, '#kind-filters');
        // the list has the keyboard: down to the group's second episode, Enter selects it
        const list = frame.locator('#list');
        await list.focus();
        await page.keyboard.press('Home');
        await page.keyboard.press('ArrowDown');
        await page.keyboard.press('ArrowDown');
        await page.keyboard.press('ArrowDown');
        await page.keyboard.press('Enter');
        const transcript = frame.locator('#detail .transcript');
        await transcript.locator('.ep-summary', { hasText: '2 parse errors' }).waitFor({ timeout: 30_000 });
        await transcript.locator('.ep-model.ep-parse-error .msg-flag', { hasText: 'parse error: tool call did not parse' }).first().waitFor({ timeout: 5_000 });
        await transcript.locator('.ep-model.ep-parse-error .ep-reward', { hasText: 'reward -1' }).first().waitFor({ timeout: 5_000 });
        // the transcript takes the focus (Tab from the links), so a long one scrolls from the keyboard
        await transcript.focus();
        if (!(await transcript.evaluate((t) => t === document.activeElement))) throw new Error('the transcript does not take the focus');
        await screenshot(`episode-parse-errors${suffix}`);
        // the group whose env failed: its rows, the error with its traceback and the env file's line
        await frame.locator('.row.group', { hasText: '#3' }).click();
        await frame.locator('.row.sample .flag.end.negative', { hasText: 'env error' }).first().click();
        await frame.locator('#detail .reward-error', { hasText: "KeyError: 'y'" }).waitFor({ timeout: 30_000 });
        await frame.locator('#detail .reward-error a', { hasText: 'open the env file arith_tools.env.py at line 19' }).waitFor({ timeout: 5_000 });
        await frame.locator('#detail .reward-error pre.traceback', { hasText: 'line 19, in __init__' }).waitFor({ timeout: 5_000 });
        await frame.locator('#detail .transcript .ep-summary .ep-end', { hasText: 'env error' }).waitFor({ timeout: 30_000 });
        await screenshot(`episode-env-error${suffix}`);
      },
    },
    {
      name: `transcript${suffix}: best vs worst of a group diffs the two transcripts turn by turn`,
      async run({ page, screenshot }) {
        const frame = await webviewWith(page, '#kind-filters');
        await frame.locator('.row.sample').first().click();
        await frame.locator('#detail a.compare', { hasText: 'Compare best vs worst' }).click();
        await page.locator('.tab', { hasText: /group 0: sample \d+ \(reward/ }).first().waitFor({ timeout: 30_000 });
        await page.locator('.monaco-diff-editor .view-line', { hasText: '## turn 1' }).first().waitFor({ timeout: 30_000 });
        await page.locator('.monaco-diff-editor .view-line', { hasText: '### assistant · reward' }).first().waitFor({ timeout: 30_000 });
        await roomForEditors(page);
        await screenshot(`episode-diff${suffix}`);
      },
    },
  ];
}
