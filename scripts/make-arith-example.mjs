// Writes examples/arithmetic/train.jsonl and holdout.jsonl: "What is x + y?" for x, y in 0..99, the
// answer x + y. The holdout is exactly the pairs the engine's arith-gpt never saw in pretraining
// (isArithHoldout in src/engine/model/models.ts; copied here, a unit test checks the files agree).
//   node scripts/make-arith-example.mjs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'examples/arithmetic');

/** Same as isArithHoldout in src/engine/model/models.ts: murmur3's finaliser, 10 % of the pairs. */
function isArithHoldout(x, y) {
  let h = (x * 100 + y + 1) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  return h % 10 === 0;
}

const train = [];
const holdout = [];
for (let x = 0; x < 100; x++)
  for (let y = 0; y < 100; y++) (isArithHoldout(x, y) ? holdout : train).push(JSON.stringify({ question: `What is ${x} + ${y}?`, answer: x + y }));
fs.writeFileSync(path.join(dir, 'train.jsonl'), train.join('\n') + '\n');
fs.writeFileSync(path.join(dir, 'holdout.jsonl'), holdout.join('\n') + '\n');
console.log(`train.jsonl: ${train.length} problems, holdout.jsonl: ${holdout.length} problems`);
