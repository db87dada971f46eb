// Build asset: the engine's pretrained weights file, copied next to the bundled engine in dist/.
import fs from 'node:fs';
import path from 'node:path';

export function build(root) {
  const dir = 'src/engine/weights';
  const file = path.join(root, dir, 'arith-gpt.tsw');
  return fs.existsSync(file) ? [{ dir, name: 'arith-gpt.tsw', bytes: fs.readFileSync(file) }] : [];
}
