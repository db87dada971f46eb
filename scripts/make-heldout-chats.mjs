// Writes examples/suite/heldout-chats.jsonl: held-out chats for the NLL eval (examples/suite/nll.eval.json),
// single-turn "What is x + y?" → "x+y" chats in the SFT format ({"messages": [...]}), drawn by
// arithEpisode('single', …, holdout) from a seeded PRNG: every pair is one the engine's models never
// saw in pretraining (isArithHoldout), each pair at most once. Deterministic: the same file every run.
//   npm run compile-tests && node scripts/make-heldout-chats.mjs [--count 120] [--seed 47]
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { arithEpisode, isArithHoldout } = require(path.join(root, 'out/src/core/data/arithChat.js'));
const { mulberry32 } = require(path.join(root, 'out/src/core/data/prng.js'));

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const count = arg('count', 120);
const seed = arg('seed', 47);

const rand = mulberry32(seed);
const seen = new Set();
const lines = [];
while (lines.length < count) {
  const ep = arithEpisode('single', rand, true);
  const [[x, y]] = ep.sums;
  if (!isArithHoldout(x, y)) throw new Error(`${x} + ${y} is not a holdout pair`);
  const key = `${x}+${y}`;
  if (seen.has(key)) continue;
  seen.add(key);
  lines.push(JSON.stringify({ messages: ep.messages }));
}
const out = path.join(root, 'examples/suite/heldout-chats.jsonl');
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, lines.join('\n') + '\n');
console.log(`${path.relative(root, out)}: ${lines.length} held-out chats (seed ${seed})`);
