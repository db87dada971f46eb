// The environment examples speak arith-chat's pretraining phrases verbatim (src/core/data/arithChat.ts,
// docs/engine.md), declare the calculator tool exactly, and their specs parse.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { ARITH_PHRASES, CALCULATOR_TOOL } from '../../../src/core/data/arithChat';
import { parseGrpoSpecFile } from '../../../src/core/grpo/spec';

const root = path.resolve(__dirname, '../../../..');
const read = (f: string) => fs.readFileSync(path.join(root, 'examples', f), 'utf8');

describe('env: examples', () => {
  it('arith-retry asks the question and answers a wrong reply with the "wrong, try again" phrase', () => {
    const src = read('arith-retry/arith_retry.env.py');
    assert.ok(src.includes('"What is %d + %d?" % (self.x, self.y)') && ARITH_PHRASES.question(3, 4) === 'What is 3 + 4?');
    assert.ok(src.includes(JSON.stringify(ARITH_PHRASES.wrong)));
  });

  it('arith-chain follows up with the "Now add" phrase', () => {
    const src = read('arith-chain/arith_chain.env.py');
    assert.ok(src.includes('"What is %d + %d?"'));
    assert.strictEqual(ARITH_PHRASES.followUp(17), 'Now add 17.');
    assert.ok(src.includes('"Now add %d." % self.z'));
  });

  it('arith-tools declares the calculator tool exactly as arith-chat was pretrained on it', () => {
    const src = read('arith-tools/arith_tools.env.py');
    const m = /CALCULATOR = (\{[\s\S]*?\n\})/.exec(src);
    assert.ok(m, 'CALCULATOR is defined');
    assert.deepStrictEqual(JSON.parse(m[1]!.replace(/\n/g, '')), CALCULATOR_TOOL);
  });

  for (const ex of ['arith-retry', 'arith-chain', 'arith-tools']) {
    it(`${ex}: the spec parses, runs its env file on arith-chat with chatml, and its README gives the command`, async () => {
      const { spec } = await parseGrpoSpecFile(path.join(root, 'examples', ex, `${ex}.grpo.json`));
      assert.strictEqual(spec.model, 'tinker-studio/arith-chat');
      assert.strictEqual(spec.renderer, 'chatml');
      assert.ok(spec.env && fs.existsSync(spec.env.file));
      assert.ok(read(`${ex}/README.md`).includes(`tinker-studio grpo examples/${ex}/${ex}.grpo.json`));
    });
  }
});
