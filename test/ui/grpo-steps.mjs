// Steps shared by grpo-light.ui.mjs and grpo-dark.ui.mjs: a short variant of the arithmetic example
// run through the command palette on the local engine, then the metrics panel (also after a window
// reload) and both trees, with screenshots. Completion is observed in the UI, never waited out.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openTinker, pane, quickOpen, reloadWindow, runCommand } from './palette.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUN_TIMEOUT = 360_000;

/** The short variant of examples/arithmetic, written into the workspace under arith/. */
export function writeShortArithmetic(workspace) {
  const dir = path.join(workspace, 'arith');
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ['train.jsonl', 'holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(root, 'examples/arithmetic', f), path.join(dir, f));
  const spec = JSON.parse(fs.readFileSync(path.join(root, 'examples/arithmetic/arith.grpo.json'), 'utf8'));
  Object.assign(spec, { name: 'arith-short', iterations: 8, groups_per_batch: 8, group_size: 8, eval_every: 2, save_every: 4 });
  spec.dataset = { ...spec.dataset, holdout_max: 48 };
  // an inline evaluator next to the holdout: its own chart in the metrics panel
  spec.evals = [{ name: 'probe', dataset: { path: 'holdout.jsonl', max_problems: 16 }, every: 4, n: 2 }];
  fs.writeFileSync(path.join(dir, 'arith-short.grpo.json'), `${JSON.stringify(spec, null, 2)}\n`);
  return dir;
}

/** The metrics webview's document (two nested iframes in the workbench). */
function metricsFrame(page) {
  return page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
}

async function waitForCharts(page) {
  const frame = metricsFrame(page);
  await frame.locator('#run-name', { hasText: 'arith-short' }).waitFor({ timeout: 60_000 });
  await frame.locator('.chart:not(.no-data) .uplot canvas').first().waitFor({ timeout: 60_000 });
  // every chart with data has drawn its canvas; the group chart has its three series in the legend
  await frame.locator('#chart-groups-title').waitFor({ timeout: 30_000 });
  await frame.locator('.chart', { has: frame.locator('#chart-groups-title') }).locator('.u-legend', { hasText: 'all bad' }).waitFor({ timeout: 30_000 });
  // a GRPO run logs no NLL, so the SFT chart is left out
  await frame.locator('.chart', { has: frame.locator('#chart-nll-title') }).waitFor({ state: 'hidden', timeout: 30_000 });
  return frame;
}

async function setSidebar(page, visible) {
  const sidebar = page.locator('#workbench\\.parts\\.sidebar');
  if ((await sidebar.isVisible()) !== visible) {
    await page.keyboard.press('Control+B');
    await sidebar.waitFor({ state: visible ? 'visible' : 'hidden', timeout: 15_000 });
  }
}

/** Drags the sash between the side bar and the editor so tree rows show their descriptions. */
/** The JSON in `file` once it is on disk whole (a condition polled with a limit, not a fixed sleep). */
async function savedJson(file, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${file} did not hold whole JSON within ${timeoutMs} ms: ${err.message}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function widenSidebar(page, x) {
  const sidebar = await page.locator('#workbench\\.parts\\.sidebar').boundingBox();
  if (!sidebar) return;
  const edge = sidebar.x + sidebar.width;
  let box;
  for (const sash of await page.locator('.monaco-sash.vertical').all()) {
    const b = await sash.boundingBox();
    if (b && b.height > 200 && Math.abs(b.x + b.width / 2 - edge) < 8) box = b;
  }
  if (!box) throw new Error('the side bar sash was not found');
  await page.mouse.move(box.x + box.width / 2, box.y + 200);
  await page.mouse.down();
  await page.mouse.move(x, box.y + 200, { steps: 8 });
  await page.mouse.up();
  await page.mouse.move(x + 300, 20); // off the sash, so it is not drawn highlighted
}

/** Answers the quick pick or input box on screen: types `text` (if any) and presses Enter. */
export async function answer(page, titlePart, text) {
  const widget = page.locator('.quick-input-widget');
  await widget.locator('.quick-input-title', { hasText: titlePart }).waitFor({ timeout: 60_000 });
  if (text !== undefined) {
    await page.keyboard.press('Control+A');
    await page.keyboard.type(text);
    // a quick pick filters as one types: wait for the row to be the first one
    const row = widget.locator('.monaco-list-row').first();
    if (await row.isVisible()) await row.filter({ hasText: text }).waitFor({ timeout: 15_000 }).catch(() => undefined);
  }
  // a quick pick takes Enter once its list has a focused row and its input the keyboard focus
  if (await widget.locator('.monaco-list-row').first().isVisible()) await widget.locator('.monaco-list-row.focused').first().waitFor({ timeout: 15_000 });
  await widget.locator('.quick-input-box input:focus').waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
}

/** The guided flow of Start GRPO Run, answered through its quick picks and input boxes. */
const guidedTest = {
  name: 'arithmetic example: the guided flow asks step by step, writes the spec and starts it',
  async run({ page, workspace, screenshot }) {
    await runCommand(page, 'Tinker: Start GRPO Run');
    await answer(page, 'Tinker: Start GRPO Run', 'New run spec');
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'tinker-studio/arith-gpt' }).waitFor({ timeout: 60_000 });
    await screenshot('guided-model-pick');
    await answer(page, 'model', 'tinker-studio/arith-gpt');
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'recommended for tinker-studio/arith-gpt' }).waitFor({ timeout: 15_000 });
    await answer(page, 'renderer'); // the recommended one is first
    await answer(page, 'dataset', 'train.jsonl');
    await answer(page, 'holdout', 'holdout.jsonl');
    await answer(page, 'reward function', 'reward.py');
    await answer(page, 'group size', '4');
    await answer(page, 'groups per batch', '4');
    await answer(page, 'iterations', '2');
    await answer(page, 'max tokens'); // the default for the engine's models
    await answer(page, 'spec file');
    const specFile = path.join(workspace, 'arith', 'arith-gpt-grpo.grpo.json');
    await page.locator('.tab', { hasText: 'arith-gpt-grpo.grpo.json' }).waitFor({ timeout: 30_000 });
    // the tab can show the new document before its save reaches the disk: wait for the saved text
    const spec = await savedJson(specFile, 30_000);
    if (spec.group_size !== 4 || spec.iterations !== 2 || spec.dataset?.path !== 'train.jsonl') throw new Error(`unexpected spec: ${JSON.stringify(spec)}`);
    await page.locator('.notification-toast', { hasText: 'GRPO run arith-gpt-grpo completed' }).waitFor({ timeout: RUN_TIMEOUT });
    await screenshot('guided-run-completed');
  },
};

export function grpoTests(suffix, { guided = false } = {}) {
  const shot = (name) => `${name}${suffix}`;
  return [
    {
      name: 'arithmetic example: Start GRPO Run from the command palette runs it to completion',
      async run({ page, open, workspace, screenshot }) {
        writeShortArithmetic(workspace);
        await open();
        await openTinker(page);
        await pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'arith-demo' }).waitFor({ timeout: 30_000 });
        // open the spec (Quick Open), so the command runs it
        await quickOpen(page, 'arith-short.grpo.json');
        await page.locator('.codelens-decoration', { hasText: 'Start run' }).waitFor({ timeout: 30_000 });
        await runCommand(page, 'Tinker: Start GRPO Run');
        const status = page.locator('#workbench\\.parts\\.statusbar').getByText(/GRPO arith-short: iteration \d+\/8/);
        await status.waitFor({ timeout: 120_000 });
        await screenshot(shot('grpo-running'));
        const row = pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'arith-short' });
        await row.filter({ hasText: 'completed' }).waitFor({ timeout: RUN_TIMEOUT });
        await page.locator('.notification-toast', { hasText: 'GRPO run arith-short completed' }).waitFor({ timeout: 30_000 });
      },
    },
    {
      name: 'arithmetic example: Open Metrics on the finished-run notification shows the charts',
      async run({ page, screenshot, log }) {
        // more room for the charts; done before the webview takes the keyboard focus
        await setSidebar(page, false);
        const toast = page.locator('.notification-toast', { hasText: 'GRPO run arith-short completed' });
        await toast.getByRole('button', { name: 'Open Metrics' }).click();
        const frame = await waitForCharts(page);
        await frame.locator('.chart', { has: frame.locator('#chart-reward-title') }).locator('.latest', { hasText: 'holdout (test)' }).waitFor({ timeout: 30_000 });
        // the inline evaluator's chart: reward, pass@1 and pass@2, drawn
        const probe = frame.locator('.chart', { has: frame.locator('#chart-eval-probe-title', { hasText: 'Evaluator probe' }) });
        await probe.locator('.latest', { hasText: 'pass@2' }).waitFor({ timeout: 30_000 });
        await probe.locator('.uplot canvas').first().waitFor({ timeout: 30_000 });
        const colours = await frame.locator('html').evaluate((el) =>
          ['blue', 'orange', 'green', 'red', 'purple'].map((c) => `${c}=${getComputedStyle(el).getPropertyValue(`--vscode-charts-${c}`).trim()}`).join(' '),
        );
        log(`theme chart colours in the webview: ${colours}`);
        await screenshot(shot('metrics-panel'));
      },
    },
    {
      name: 'arithmetic example: the metrics panel is restored with its charts after a window reload',
      async run({ page, screenshot }) {
        await reloadWindow(page);
        await waitForCharts(page);
        await screenshot(shot('metrics-panel-restored'));
      },
    },
    {
      name: 'arithmetic example: the Runs view shows the run as completed with iteration and reward',
      async run({ page, screenshot }) {
        await openTinker(page);
        await widenSidebar(page, 620);
        const row = pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'arith-short' });
        await row.filter({ hasText: /iteration 7 · reward \d\.\d{3} · completed/ }).waitFor({ timeout: 30_000 });
        // the Server node lists the engine's training runs when expanded
        const server = pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'Server: local engine' });
        await server.waitFor({ timeout: 10_000 });
        await server.click();
        // the example's own model (the demo's), whichever it is
        const { model } = JSON.parse(fs.readFileSync(path.join(root, 'examples/arithmetic/arith.grpo.json'), 'utf8'));
        await pane(page, 'Runs').locator('.monaco-list-row', { hasText: `${model} · rank 8` }).first().waitFor({ timeout: 30_000 });
        await screenshot(shot('runs-tree'));
      },
    },
    {
      name: 'arithmetic example: the Checkpoints view lists the run’s checkpoints with state and sampler paths',
      async run({ page, screenshot }) {
        const header = page.locator('.pane-header', { hasText: 'Checkpoints' });
        if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
        const ckpts = pane(page, 'Checkpoints');
        const final = ckpts.locator('.monaco-list-row', { hasText: 'final' }).first();
        await final.waitFor({ timeout: 30_000 });
        await final.click();
        await page.keyboard.press('ArrowRight');
        await ckpts.locator('.monaco-list-row', { hasText: /sampler.*tinker:\/\// }).first().waitFor({ timeout: 15_000 });
        await screenshot(shot('checkpoints-tree'));
      },
    },
    ...breakdownTests(shot),
    ...(guided ? [guidedTest] : []),
  ];
}

/** The webview document that has `selector` (several webviews may be open). */
export async function webviewWith(page, selector, timeout = 60_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const n = await page.locator('iframe.webview.ready').count();
    for (let i = 0; i < n; i++) {
      const frame = page.frameLocator('iframe.webview.ready').nth(i).frameLocator('iframe#active-frame');
      if ((await frame.locator(selector).count()) > 0) return frame;
    }
    if (Date.now() > deadline) throw new Error(`no webview shows ${selector}`);
    await page.waitForTimeout(250);
  }
}

/** Opens the workbench, waits for `run` in the Runs view and shows its iteration 0 in the group breakdown; the breakdown's document. */
export async function showFirstIteration(page, open, run) {
  await open();
  await openTinker(page);
  await pane(page, 'Runs').locator('.monaco-list-row', { hasText: run }).first().waitFor({ timeout: 60_000 });
  await commandCenter(page, 'Tinker: Show Iteration');
  await answer(page, 'Tinker: Show Iteration', run);
  await answer(page, run, 'iteration 0');
  return webviewWith(page, '#kind-filters');
}

/** Runs a command through the command center (a webview may hold the keyboard focus). */
export async function commandCenter(page, title) {
  await page.locator('.command-center-center').click();
  await page.locator('.quick-input-widget').waitFor({ state: 'visible', timeout: 15_000 });
  await page.keyboard.type(`>${title}`);
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
}

/** Closes the side bar (the breakdown and the diffs get the width) and moves the pointer off any tooltip. */
export async function roomForEditors(page) {
  if (await page.locator('#workbench\\.parts\\.sidebar').isVisible()) {
    await commandCenter(page, 'View: Close Primary Side Bar');
    await page.locator('#workbench\\.parts\\.sidebar').waitFor({ state: 'hidden', timeout: 15_000 });
  }
  await page.mouse.move(1100, 790);
}

/** A finished run whose reward function failed on most samples: the run doctor has findings. */
function writeBrokenRewardRun(workspace) {
  const dir = path.join(workspace, 'runs', 'broken-reward');
  fs.mkdirSync(path.join(dir, 'iteration_000000'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_name: 'tinker-studio/arith-gpt' }));
  fs.writeFileSync(path.join(dir, 'metrics.jsonl'), '{"step": 0, "env/all/reward/total": 0.0625}\n');
  const lines = [];
  for (let g = 0; g < 4; g++) {
    for (let t = 0; t < 4; t++) {
      const ok = g === 0 && t === 0;
      lines.push(JSON.stringify({
        group_idx: g, traj_idx: t, problem_id: `train.jsonl:${g + 1}`, prompt: `<|im_start|>user\nWhat is ${g} + ${g}?<|im_end|>\n<|im_start|>assistant\n`,
        completion: String(2 * g), content: String(2 * g), ground_truth: String(2 * g), completion_tokens: [48 + g], logprobs: [-0.2],
        reward: ok ? 1 : 0, advantage: 0, stop_reason: 'stop', termination: 'eos',
        ...(ok ? {} : { reward_error: { kind: 'exception', message: "TypeError: unsupported operand type(s) for +: 'int' and 'str'", traceback: 'File "reward.py", line 9, in compute_reward', line: 9 } }),
      }));
    }
  }
  fs.writeFileSync(path.join(dir, 'iteration_000000', 'train_samples.jsonl'), lines.join('\n') + '\n');
}

/** After the short run: its group breakdown, a sample's tokens, best vs worst, What changed, a doctor finding. */
function breakdownTests(shot) {
  return [
    {
      name: 'arithmetic example: a run in the Runs view expands to its iterations; one opens its group breakdown with a mixed group expanded',
      async run({ page, screenshot }) {
        const runs = pane(page, 'Runs');
        const row = runs.locator('.monaco-list-row', { hasText: 'arith-short' }).first();
        await row.locator('.monaco-tl-twistie').click();
        const iteration = runs.locator('.monaco-list-row', { hasText: /iteration 7\s*training/ }).first();
        await iteration.waitFor({ timeout: 30_000 });
        await runs.locator('.monaco-list-row', { hasText: /iteration 6\s*holdout evaluation/ }).first().waitFor({ timeout: 30_000 });
        await iteration.click();
        await screenshot(shot('runs-tree-iterations'));
        const frame = await webviewWith(page, '#kind-filters');
        await frame.locator('#title', { hasText: 'iteration 7' }).waitFor({ timeout: 60_000 });
        await frame.locator('label.kind-mixed input').check();
        // the latest iteration may have no mixed group: step back until one has
        for (let i = 0; i < 7 && /^0 of/.test((await frame.locator('#count').textContent()) ?? ''); i++) {
          const title = await frame.locator('#title').textContent();
          await frame.locator('#prev').click();
          await frame.locator('#title').filter({ hasNotText: title ?? '' }).waitFor({ timeout: 30_000 });
        }
        await frame.locator('#count', { hasNotText: /^0 of/ }).waitFor({ timeout: 10_000 });
        await frame.locator('.row.group').first().click();
        await frame.locator('.row.group[aria-expanded="true"]').first().waitFor({ timeout: 10_000 });
        await frame.locator('.row.sample').first().waitFor({ timeout: 10_000 });
        await roomForEditors(page);
        await screenshot(shot('breakdown-mixed-group'));
      },
    },
    {
      name: 'arithmetic example: a sample shows in full with its per-token log-prob strip',
      async run({ page, screenshot }) {
        const frame = await webviewWith(page, '#kind-filters');
        await frame.locator('.row.sample').first().click();
        await frame.locator('#detail .tokens .tok').first().waitFor({ timeout: 30_000 });
        await frame.locator('#detail .tokens .tok').first().hover();
        await screenshot(shot('breakdown-token-view'));
      },
    },
    {
      name: 'arithmetic example: "Compare best vs worst" opens the group’s two samples in the diff editor',
      async run({ page, screenshot }) {
        const frame = await webviewWith(page, '#kind-filters');
        await frame.locator('#detail a.compare', { hasText: 'Compare best vs worst' }).click();
        await page.locator('.tab', { hasText: /group \d+: sample \d+ \(reward/ }).first().waitFor({ timeout: 30_000 });
        await page.locator('.monaco-diff-editor .line-insert, .monaco-diff-editor .char-insert').first().waitFor({ timeout: 30_000 });
        await roomForEditors(page);
        await screenshot(shot('sample-diff-best-worst'));
      },
    },
    {
      name: 'arithmetic example: What Changed opens every holdout problem whose reward changed between the first and the latest evaluation',
      async run({ page, screenshot }) {
        await commandCenter(page, 'Tinker: What Changed');
        await answer(page, 'Tinker: What Changed', 'arith-short');
        await page.locator('.tab', { hasText: /What changed: arith-short.*evaluation 0 → 6/ }).first().waitFor({ timeout: 60_000 });
        await page.locator('.multiDiffEditor').getByText(/· reward [\d.-]+ → [\d.-]+/).first().waitFor({ timeout: 30_000 });
        await roomForEditors(page);
        await screenshot(shot('what-changed'));
      },
    },
    {
      name: 'run doctor: the breakdown of an iteration whose reward failed shows the finding with its evidence and remedy',
      async run({ page, workspace, screenshot }) {
        writeBrokenRewardRun(workspace);
        await openTinker(page);
        await pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'broken-reward' }).first().waitFor({ timeout: 30_000 });
        await commandCenter(page, 'Tinker: Show Iteration');
        await answer(page, 'Tinker: Show Iteration', 'broken-reward');
        await answer(page, 'broken-reward', 'iteration 0');
        const frame = await webviewWith(page, '#findings .finding[data-finding="reward-errors"]');
        await frame.locator('#findings .finding', { hasText: 'The reward function failed on many samples' }).waitFor({ timeout: 10_000 });
        await frame.locator('#findings .finding', { hasText: '15 of 16 samples' }).waitFor({ timeout: 10_000 });
        await roomForEditors(page);
        await screenshot(shot('doctor-finding'));
        // the next steps start from an empty editor area, the keyboard in the workbench
        await commandCenter(page, 'View: Close All Editors');
        await page.locator('.tab').first().waitFor({ state: 'detached', timeout: 15_000 });
      },
    },
  ];
}
