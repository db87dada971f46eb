// Build asset: the engine's pretrained weights files, copied next to the bundled engine in dist/.
import fs from 'node:fs';
import path from 'node:path';

/** arith-gpt (scripts/pretrain-arith.mjs) and arith-chat (scripts/pretrain-arith-chat.mjs). */
const FILES = ['arith-gpt.tsw', 'arith-chat.tsw'];

export function build(root) {
  const dir = 'src/engine/weights';
  return FILES.filter((name) => fs.existsSync(path.join(root, dir, name))).map((name) => ({ dir, name, bytes: fs.readFileSync(path.join(root, dir, name)) }));
}
