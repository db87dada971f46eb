// Writes examples/arithmetic/train.jsonl and holdout.jsonl: "What is x + y?" for x, y in 0..99, the
// answer x + y. The holdout is exactly the pairs the engine's arith-gpt never saw in pretraining
// (isArithHoldout in src/engine/model/models.ts, compiled: run `npm run compile` first).
//   node scripts/make-arith-example.mjs
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'examples/arithmetic');
const { isArithHoldout } = createRequire(import.meta.url)(path.join(root, 'out/src/engine/model/models.js'));

const train = [];
const holdout = [];
for (let x = 0; x < 100; x++)
  for (let y = 0; y < 100; y++) (isArithHoldout(x, y) ? holdout : train).push(JSON.stringify({ question: `What is ${x} + ${y}?`, answer: x + y }));
fs.writeFileSync(path.join(dir, 'train.jsonl'), train.join('\n') + '\n');
fs.writeFileSync(path.join(dir, 'holdout.jsonl'), holdout.join('\n') + '\n');
console.log(`train.jsonl: ${train.length} problems, holdout.jsonl: ${holdout.length} problems`);
