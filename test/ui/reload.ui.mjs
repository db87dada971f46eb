// The window reloads in the middle of a GRPO run (Developer: Reload Window, as a person would): the
// extension host and the engine it started go away with the old window. After the reload the Runs view
// shows the run as interrupted, the spec's "Resume run" CodeLens finishes it, and every iteration
// is logged exactly once — checked in metrics.jsonl and in the engine's applied-steps record.
// The run cannot finish before the reload however fast the engine is: its reward (the arithmetic
// one) holds every call once the run has written a checkpoint, until the test releases it before
// the resume.
// Screenshots: reload-interrupted.png, reload-resumed.png.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openTinker, pane, quickOpen, reloadWindow } from './palette.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NAME = 'reload-me';
const ITERATIONS = 10;
const RUN_TIMEOUT = 360_000;

/** Polls `probe` until it returns a value (a condition on files, not a fixed sleep). */
async function until(what, probe, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function runDirOf(workspace) {
  const runs = path.join(workspace, 'runs');
  if (!fs.existsSync(runs)) return undefined;
  const d = fs.readdirSync(runs).find((n) => n.startsWith(`${NAME}-`));
  return d ? path.join(runs, d) : undefined;
}

const lines = (file) =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .flatMap((l) => {
          try {
            return [JSON.parse(l)];
          } catch {
            return []; // a line cut off when the process died
          }
        })
    : [];

function findFile(dir, name) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isFile() && e.name === name) return p;
    if (e.isDirectory() && !e.isSymbolicLink() && e.name !== 'node_modules' && e.name !== 'extensions') {
      const found = findFile(p, name);
      if (found) return found;
    }
  }
  return undefined;
}

let interruptedAt;

/**
 * The arithmetic reward behind a gate: once a run of this spec has written a checkpoint, each call
 * waits until `release` exists. Its calls may wait that long (timeout_ms in the spec).
 */
function gatedReward(runsDir, release) {
  const arith = fs.readFileSync(path.join(root, 'examples/arithmetic/reward.py'), 'utf8');
  return `${arith}

# --- the reload test's gate ---
import os as _os
import time as _time

_RUNS = ${JSON.stringify(runsDir)}
_RELEASE = ${JSON.stringify(release)}
_arith_reward = compute_reward


def _held():
    if _os.path.exists(_RELEASE) or not _os.path.isdir(_RUNS):
        return False
    for name in _os.listdir(_RUNS):
        ckpts = _os.path.join(_RUNS, name, "checkpoints.jsonl")
        if name.startswith(${JSON.stringify(`${NAME}-`)}) and _os.path.exists(ckpts) and _os.path.getsize(ckpts) > 0:
            return True
    return False


def compute_reward(completion: str, ground_truth: str) -> float:
    while _held():
        _time.sleep(0.05)
    return _arith_reward(completion, ground_truth)
`;
}

export const tests = [
  {
    name: 'a window reload in the middle of a run leaves it interrupted and resumable in the Runs view',
    async run({ page, open, workspace, screenshot, log }) {
      const dir = path.join(workspace, 'reload');
      fs.mkdirSync(dir, { recursive: true });
      fs.copyFileSync(path.join(root, 'examples/arithmetic/train.jsonl'), path.join(dir, 'train.jsonl'));
      fs.writeFileSync(path.join(dir, 'reward.py'), gatedReward(path.join(workspace, 'runs'), path.join(dir, 'release')));
      const spec = JSON.parse(fs.readFileSync(path.join(root, 'examples/arithmetic/arith.grpo.json'), 'utf8'));
      Object.assign(spec, { name: NAME, iterations: ITERATIONS, groups_per_batch: 8, group_size: 4, eval_every: 0, save_every: 1 });
      spec.reward = { ...spec.reward, timeout_ms: 600_000 };
      spec.dataset = { ...spec.dataset, holdout: undefined };
      fs.writeFileSync(path.join(dir, `${NAME}.grpo.json`), `${JSON.stringify(spec, null, 2)}\n`);

      await open();
      await openTinker(page);
      await pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'arith-demo' }).waitFor({ timeout: 30_000 });
      await quickOpen(page, `${NAME}.grpo.json`);
      // started from the spec's CodeLens (the palette path is the GRPO UI tests'): the palette hides
      // Start GRPO Run until the window reports the workspace trusted, which can come late under load
      await page.locator('.codelens-decoration a', { hasText: 'Start run' }).click();

      // reload once an iteration is logged and checkpointed; the gate holds the run's next rewards
      const runDir = await until('the run directory', () => runDirOf(workspace), RUN_TIMEOUT);
      await until('the first checkpoint', () => lines(path.join(runDir, 'checkpoints.jsonl')).length >= 1, RUN_TIMEOUT);
      await reloadWindow(page);
      const metrics = lines(path.join(runDir, 'metrics.jsonl')).map((l) => l.step);
      const checkpoints = lines(path.join(runDir, 'checkpoints.jsonl'));
      log(`after the reload: steps ${metrics.join(',')}; checkpoints ${checkpoints.map((c) => c.name).join(',')}`);
      if (checkpoints.some((c) => c.name === 'final')) throw new Error('the run finished before the reload: nothing was interrupted');
      if (metrics.join() !== metrics.map((_, i) => i).join()) throw new Error(`steps before the reload are not 0..k-1 once each: ${metrics.join(',')}`);

      // the extension is back (its status bar item) before the Tinker container is opened
      await page.locator('#workbench\\.parts\\.statusbar').getByText('Tinker: local engine').waitFor({ timeout: 90_000 });
      await openTinker(page);
      const row = pane(page, 'Runs').locator('.monaco-list-row', { hasText: NAME });
      await row.filter({ hasText: 'interrupted' }).waitFor({ timeout: 60_000 });
      interruptedAt = { release: path.join(dir, 'release'), runDir, steps: lines(path.join(runDir, 'metrics.jsonl')).length, resumeBatch: lines(path.join(runDir, 'checkpoints.jsonl')).at(-1).batch };
      log(`interrupted: ${interruptedAt.steps} steps logged, resume point at batch ${interruptedAt.resumeBatch}`);
      await screenshot('reload-interrupted');
    },
  },
  {
    name: 'Resume from the spec finishes the interrupted run; no iteration is lost or repeated',
    async run({ page, sandbox, screenshot }) {
      if (!interruptedAt) throw new Error('the previous step did not leave an interrupted run');
      const { runDir, resumeBatch, release } = interruptedAt;
      fs.writeFileSync(release, ''); // the gate lets the resumed run's rewards through
      // the spec editor, restored by the reload, offers "Resume run <dir>" above the spec
      const lens = page.locator('.codelens-decoration a', { hasText: `Resume run ${path.basename(runDir)}` });
      await lens.waitFor({ timeout: 30_000 });
      await lens.click();
      await page.locator('.notification-toast', { hasText: `GRPO run ${NAME} completed` }).waitFor({ timeout: RUN_TIMEOUT });
      await pane(page, 'Runs').locator('.monaco-list-row', { hasText: NAME }).filter({ hasText: 'completed' }).waitFor({ timeout: 30_000 });
      await screenshot('reload-resumed');

      const steps = lines(path.join(runDir, 'metrics.jsonl')).map((l) => l.step);
      const want = Array.from({ length: ITERATIONS }, (_, i) => i);
      if (steps.join() !== want.join()) throw new Error(`metrics.jsonl steps ${steps.join(',')}, want each of ${want.join(',')} once`);
      const final = lines(path.join(runDir, 'checkpoints.jsonl')).at(-1);
      if (final?.name !== 'final') throw new Error('no final checkpoint');

      // the engine's own record: the resumed model starts from the saved state and applies each missing update once
      const applied = findFile(sandbox, 'applied-steps.jsonl');
      if (!applied) throw new Error(`no applied-steps.jsonl under ${sandbox}`);
      const model = String(final.state_path).slice('tinker://'.length).split('/')[0];
      const types = lines(applied).filter((s) => s.model_id === model).map((s) => s.type);
      if (types[0] !== 'load_weights') throw new Error(`the resumed model did not start from the checkpoint: ${types.join(',')}`);
      const updates = types.filter((t) => t === 'optim_step').length;
      if (updates !== ITERATIONS - resumeBatch) throw new Error(`the resumed model applied ${updates} updates, want ${ITERATIONS - resumeBatch}`);
    },
  },
];
