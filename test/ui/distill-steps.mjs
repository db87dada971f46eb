// Steps shared by distill-light.ui.mjs and distill-dark.ui.mjs: a short variant of
// examples/distill-arithmetic through the command palette on the local engine — the teacher (GRPO),
// the student distilled from it with {"run": "latest", "checkpoint": "final"} and no reward, and the
// GRPO baseline from the same start and groups — then the student's metrics panel (its KL to the
// teacher chart), the breakdown with a sample's tokens shaded by the KL to the teacher (the teacher's
// log-prob in each token's hover text), and Compare Runs of the student and the baseline on the
// evaluator's holdout reward, on the step and the tokens-trained x axes. Screenshots: distill-metrics,
// distill-kl-shading, distill-compare-step, distill-compare-tokens (+ the suffix). Completion is
// observed in the UI, never waited out.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openTinker, runCommand } from './palette.mjs';
import { commandCenter, webviewWith } from './grpo-steps.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUN_TIMEOUT = 360_000;
const HOLDOUT_KEY = 'test/holdout/env/all/reward/total';

/** The example's three specs, shortened (4 iterations, 8 groups × 4, a 64-problem holdout evaluator every 3 steps), under distill/ in the workspace. */
function writeShortDistill(workspace) {
  const dir = path.join(workspace, 'distill');
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ['train.jsonl', 'holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(root, 'examples/arithmetic', f), path.join(dir, f));
  const read = (f) => JSON.parse(fs.readFileSync(path.join(root, 'examples/distill-arithmetic', f), 'utf8'));
  const local = (ds) => ({ ...ds, path: path.basename(ds.path), ...(ds.holdout ? { holdout: { path: 'holdout.jsonl' } } : {}) });
  const short = { iterations: 4, groups_per_batch: 8, group_size: 4, eval_every: 0, save_every: 0 };
  const evals = [{ name: 'holdout', dataset: { path: 'holdout.jsonl', prompt_field: 'question', ground_truth_field: 'answer', max_problems: 64 }, grader: { file: 'reward.py' }, every: 3 }];
  const write = (name, spec) => fs.writeFileSync(path.join(dir, `${name}.grpo.json`), `${JSON.stringify({ ...spec, $schema: undefined, name }, null, 2)}\n`);
  const teacher = read('teacher.grpo.json');
  write('distill-teacher', { ...teacher, ...short, dataset: { ...local(teacher.dataset), holdout: undefined }, reward: { file: 'reward.py' } });
  const student = read('distill.grpo.json');
  write('distill-student', { ...student, ...short, dataset: local(student.dataset), evals });
  const baseline = read('baseline.grpo.json');
  write('distill-grpo', { ...baseline, ...short, dataset: local(baseline.dataset), reward: { file: 'reward.py' }, evals });
  return dir;
}

/** Quick Open of a spec: Enter only once the list's focused row is that file (a busy host may still be filtering), then its tab. */
async function openSpec(page, fileName) {
  const widget = page.locator('.quick-input-widget');
  await page.keyboard.press('Control+P');
  await widget.waitFor({ state: 'visible', timeout: 30_000 });
  await page.keyboard.type(fileName);
  await widget.locator('.monaco-list-row.focused', { hasText: fileName }).first().waitFor({ timeout: 60_000 });
  await page.keyboard.press('Enter');
  await page.locator('.tab', { hasText: fileName }).waitFor({ timeout: 60_000 });
}

async function startFromPalette(page, name) {
  await openSpec(page, `${name}.grpo.json`);
  await page.locator('.codelens-decoration', { hasText: 'Start run' }).first().waitFor({ timeout: 30_000 });
  await runCommand(page, 'Tinker: Start GRPO Run');
  await page.locator('.notification-toast', { hasText: `GRPO run ${name} completed` }).waitFor({ timeout: RUN_TIMEOUT });
}

async function quiet(page) {
  await commandCenter(page, 'Notifications: Clear All Notifications');
  await page.locator('.notification-toast').first().waitFor({ state: 'detached', timeout: 15_000 });
  if (await page.locator('#workbench\\.parts\\.sidebar').isVisible()) {
    await commandCenter(page, 'View: Close Primary Side Bar');
    await page.locator('#workbench\\.parts\\.sidebar').waitFor({ state: 'hidden', timeout: 15_000 });
  }
  await page.mouse.move(1100, 790);
}

/** Answers the quick pick on screen: types `text` and presses Enter once the first row matches it. */
async function pickRow(page, text) {
  const widget = page.locator('.quick-input-widget');
  await widget.waitFor({ state: 'visible', timeout: 30_000 });
  // the pick itself is open (its rows list the run), not the palette that opened it, and its input
  // has the focus: typed text must not land in the editor behind it
  await widget.locator('.monaco-list-row', { hasText: text }).first().waitFor({ timeout: 30_000 });
  await widget.locator('.quick-input-box input:focus').waitFor({ timeout: 15_000 });
  await widget.locator('.quick-input-box input').fill(text);
  await widget.locator('.monaco-list-row.focused', { hasText: text }).first().waitFor({ timeout: 30_000 });
  await page.keyboard.press('Enter');
}

export function distillTests(suffix) {
  const shot = (name) => `${name}${suffix}`;
  return [
    {
      name: 'distillation: the teacher, the student distilled from {"run": "latest", "checkpoint": "final"} and the GRPO baseline run from the command palette',
      async run({ page, open, workspace }) {
        writeShortDistill(workspace);
        await open();
        await openTinker(page);
        // the extension active (its status bar item) before its command is typed; the Runs view may be empty
        await page.locator('#workbench\\.parts\\.statusbar', { hasText: 'Tinker' }).waitFor({ timeout: 120_000 });
        // the teacher first: the student's "latest" names the newest non-distillation run with a final checkpoint
        await startFromPalette(page, 'distill-teacher');
        await startFromPalette(page, 'distill-student');
        await startFromPalette(page, 'distill-grpo');
        const student = fs.readdirSync(path.join(workspace, 'runs')).find((d) => d.startsWith('distill-student-'));
        const cfg = JSON.parse(fs.readFileSync(path.join(workspace, 'runs', student, 'config.json'), 'utf8'));
        if (!/^distill-teacher-.*\/final$/.test(cfg.teachers_resolved?.[0]?.label ?? '')) throw new Error(`the student's teacher is ${JSON.stringify(cfg.teachers_resolved)}`);
      },
    },
    {
      name: 'distillation: the student\'s metrics panel charts the KL to the teacher',
      async run({ page, screenshot }) {
        await quiet(page);
        await commandCenter(page, 'Tinker: Open Metrics');
        await pickRow(page, 'distill-student');
        const frame = await webviewWith(page, '#chart-teacher-kl-title');
        await frame.locator('#run-name', { hasText: 'distill-student' }).waitFor({ timeout: 60_000 });
        const chart = frame.locator('.chart', { has: frame.locator('#chart-teacher-kl-title', { hasText: 'KL to the teacher' }) });
        await chart.locator('.uplot canvas').first().waitFor({ timeout: 60_000 });
        await chart.scrollIntoViewIfNeeded();
        // the pointer off the command center, and its hover gone, before the picture
        await page.mouse.move(1100, 790);
        await page.locator('.workbench-hover-container, .monaco-hover:not(.hidden)').first().waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => undefined);
        await screenshot(shot('distill-metrics'));
      },
    },
    {
      name: 'distillation: the breakdown shades a sample\'s tokens by the KL to the teacher, the teacher\'s log-prob on hover',
      async run({ page, screenshot }) {
        await commandCenter(page, 'View: Close All Editors');
        await commandCenter(page, 'Tinker: Show Iteration');
        await pickRow(page, 'distill-student');
        await pickRow(page, 'iteration 3');
        const frame = await webviewWith(page, '#kind-filters');
        await frame.locator('#title', { hasText: 'iteration 3' }).waitFor({ timeout: 60_000 });
        // every sample scores 0 by design (no reward): the run doctor does not call that a lack of signal
        if ((await frame.locator('#findings .finding[data-finding="mostly-all-bad"]').count()) > 0) throw new Error('the breakdown of a reward-less distillation run shows the ALL-0 finding');
        // a sample with tokens: the first group's first sample
        await frame.locator('.row.group').first().click();
        await frame.locator('.row.sample').first().click();
        const strip = frame.locator('#detail .tokens.teacher');
        await strip.locator('.tok.kl').first().waitFor({ timeout: 30_000 });
        const title = (await strip.locator('.tok.kl').first().getAttribute('title')) ?? '';
        if (!/teacher log-prob -?\d+\.\d{3} \(p \d\.\d{2}\), student -?\d+\.\d{3}, log π_student − log π_teacher -?\d+\.\d{3}/.test(title)) throw new Error(`the token's hover text: "${title}"`);
        const opacities = await strip.locator('.tok.kl').evaluateAll((cells) => cells.map((c) => Number(c.style.opacity)));
        if (!opacities.every((o) => o >= 0.12 && o <= 1)) throw new Error(`shading outside 0.12..1: ${opacities.join(', ')}`);
        await frame.locator('#detail h3', { hasText: 'Tokens by KL to the teacher' }).scrollIntoViewIfNeeded();
        await strip.locator('.tok.kl').first().hover();
        await screenshot(shot('distill-kl-shading'));
      },
    },
    {
      name: 'distillation: Compare Runs shows the student and the GRPO baseline on the holdout reward, by step and by tokens trained',
      async run({ page, screenshot }) {
        await commandCenter(page, 'View: Close All Editors');
        await runCommand(page, 'Tinker: Compare Runs…');
        const pick = page.locator('.quick-input-widget');
        await pick.locator('.monaco-list-row', { hasText: 'distill-grpo' }).first().waitFor({ timeout: 60_000 });
        for (const name of ['distill-student', 'distill-grpo']) {
          await pick.locator('.quick-input-box input').fill(name);
          const row = pick.locator('.monaco-list-row', { hasText: name }).first();
          await row.waitFor({ timeout: 15_000 });
          await row.click();
        }
        await pick.getByText('2 Selected').waitFor({ timeout: 15_000 });
        await page.keyboard.press('Enter');
        const frame = await webviewWith(page, 'table#runs');
        await frame.locator('table#runs tbody tr').nth(1).waitFor({ timeout: 60_000 });
        const chart = frame.locator(`section.chart[data-key="${HOLDOUT_KEY}"]`);
        await chart.scrollIntoViewIfNeeded();
        await chart.locator('.axis-plot[data-axis="step"]:not([hidden]) canvas').first().waitFor({ timeout: 60_000 });
        await page.mouse.move(1100, 790);
        await screenshot(shot('distill-compare-step'));
        await frame.locator('#x-axis').selectOption('tokens');
        await chart.locator('.axis-plot[data-axis="tokens"]:not([hidden]) canvas').first().waitFor({ timeout: 60_000 });
        await chart.scrollIntoViewIfNeeded();
        await screenshot(shot('distill-compare-tokens'));
      },
    },
  ];
}
