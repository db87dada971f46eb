// An SFT run from the command palette on the local engine, its metrics panel (train vs validation
// NLL), then checkpoint management in the Checkpoints view through its context menu: publish and set
// a TTL, the row's badges ("public · expires in 2 days · size"), and the menu itself. Screenshots:
// sft-metrics-panel, checkpoints-badges, checkpoints-context-menu.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { widenSidebar } from './grpo-steps.mjs';
import { contextMenu, openTinker, pane, quickOpen } from './palette.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUN_TIMEOUT = 300_000;

/** The SFT arithmetic example as <workspace>/<folder>/<fields.name>.sft.json (and its chats), with `fields` set; returns the spec's file name. */
export function writeSftExample(workspace, folder, fields) {
  const dir = path.join(workspace, folder);
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(path.join(root, 'examples/sft-arithmetic/chats.jsonl'), path.join(dir, 'chats.jsonl'));
  const spec = JSON.parse(fs.readFileSync(path.join(root, 'examples/sft-arithmetic/arith.sft.json'), 'utf8'));
  delete spec.$schema;
  Object.assign(spec, fields);
  fs.writeFileSync(path.join(dir, `${fields.name}.sft.json`), `${JSON.stringify(spec, null, 2)}\n`);
  return `${fields.name}.sft.json`;
}

export const tests = [
  {
    name: 'SFT: the spec\'s Start run CodeLens runs it, and its metrics panel shows train and validation NLL',
    async run({ page, open, workspace, screenshot }) {
      writeSftExample(workspace, 'sft', { name: 'sft-short', max_steps: 8, batch_size: 16, eval_every: 2, save_every: 4 });
      await open();
      await openTinker(page);
      await quickOpen(page, 'sft-short.sft.json');
      // the spec's own CodeLens names the file it runs; the palette command reads the active editor,
      // which the extension host can learn of after the tab shows
      await page.locator('.codelens-decoration a', { hasText: 'Start run' }).click({ timeout: 30_000 });
      const toast = page.locator('.notification-toast', { hasText: 'SFT run sft-short completed' });
      await toast.waitFor({ timeout: RUN_TIMEOUT });
      await toast.getByRole('button', { name: 'Open Metrics' }).click();
      const frame = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
      await frame.locator('#run-name', { hasText: 'sft-short' }).waitFor({ timeout: 60_000 });
      const nll = frame.locator('.chart', { has: frame.locator('#chart-nll-title') });
      await nll.locator('.uplot canvas').waitFor({ timeout: 60_000 });
      await nll.locator('.u-legend', { hasText: 'validation' }).waitFor({ timeout: 30_000 });
      // an SFT run logs no reward, so the panel leaves the GRPO charts out
      await frame.locator('.chart', { has: frame.locator('#chart-reward-title') }).waitFor({ state: 'hidden', timeout: 30_000 });
      await screenshot('sft-metrics-panel');
    },
  },
  {
    name: 'Checkpoints view: publish and set a TTL from the context menu; the row shows public, expiry and size',
    async run({ page, screenshot }) {
      await openTinker(page);
      const header = page.locator('.pane-header', { hasText: 'Checkpoints' });
      if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
      await widenSidebar(page, 760);
      const ckpts = pane(page, 'Checkpoints');
      const final = ckpts.locator('.monaco-list-row', { hasText: 'final' }).first();
      await final.waitFor({ timeout: 30_000 });
      await final.click();
      await page.keyboard.press('ArrowRight');
      const sampler = ckpts.locator('.monaco-list-row', { hasText: /sampler.*tinker:\/\// }).first();
      await sampler.waitFor({ timeout: 30_000 });
      await contextMenu(page, sampler, 'Publish Checkpoint');
      await ckpts.locator('.monaco-list-row', { hasText: /sampler\s*public · \d/ }).first().waitFor({ timeout: 30_000 });
      await contextMenu(page, ckpts.locator('.monaco-list-row', { hasText: /sampler\s*public/ }).first(), 'Set Checkpoint TTL');
      const input = page.locator('.quick-input-widget');
      await input.waitFor({ state: 'visible', timeout: 15_000 });
      await page.keyboard.press('Control+A');
      await page.keyboard.type('2d');
      await page.keyboard.press('Enter');
      const badged = ckpts.locator('.monaco-list-row', { hasText: /sampler\s*public · expires in 2 days · \d+(\.\d)? (B|KiB|MiB)/ }).first();
      await badged.waitFor({ timeout: 30_000 });
      // the server's own runs, paged, under "Server runs"
      const server = ckpts.locator('.monaco-list-row', { hasText: 'Server runs' });
      await server.click();
      await ckpts.locator('.monaco-list-row', { hasText: 'tinker-studio/arith-gpt · rank 8' }).first().waitFor({ timeout: 30_000 });
      await badged.click();
      await screenshot('checkpoints-badges');
    },
  },
  {
    name: 'Checkpoints view: the context menu offers the actions that work for a public, expiring sampler checkpoint',
    async run({ page, screenshot }) {
      const ckpts = pane(page, 'Checkpoints');
      const row = ckpts.locator('.monaco-list-row', { hasText: /sampler\s*public · expires in/ }).first();
      const menu = await contextMenu(page, row);
      for (const item of ['Copy tinker:// Path', 'Show Weights Info', 'Download Checkpoint', 'Unpublish Checkpoint', 'Clear Checkpoint TTL', 'Delete Checkpoint']) {
        await menu.locator('.action-item', { hasText: item }).first().waitFor({ timeout: 10_000 });
      }
      for (const absent of ['Publish Checkpoint', 'Start GRPO from Here']) {
        if ((await menu.locator('.action-label', { hasText: new RegExp(`^${absent}`) }).count()) > 0) throw new Error(`"${absent}" is offered on a public sampler checkpoint`);
      }
      await screenshot('checkpoints-context-menu');
      await page.keyboard.press('Escape');
    },
  },
];
