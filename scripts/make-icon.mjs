#!/usr/bin/env node
// Renders media/icon.png (the Marketplace icon, 128×128) from media/tinker.svg on a gradient tile,
// with Debian's Chromium through playwright-core:  node scripts/make-icon.mjs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const svg = fs
  .readFileSync(path.join(root, 'media/tinker.svg'), 'utf8')
  .replace('width="24" height="24"', 'width="92" height="92"')
  .replaceAll('currentColor', '#ffffff');
const html = `<html><body style="margin:0"><div style="width:128px;height:128px;border-radius:22px;background:linear-gradient(135deg,#1f6feb,#7c3aed);display:flex;align-items:center;justify-content:center">${svg}</div></body></html>`;
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
const page = await browser.newPage({ viewport: { width: 200, height: 200 }, deviceScaleFactor: 1 });
await page.setContent(html);
await page.locator('div').screenshot({ path: path.join(root, 'media/icon.png'), omitBackground: true });
await browser.close();
console.log('wrote media/icon.png');
