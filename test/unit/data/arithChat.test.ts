// The pretraining formats of tinker-studio/arith-chat (src/core/data/arithChat.ts): each renders through
// the chatml renderer to exactly the text and trained spans the pretraining script trained on (the
// script builds its data with renderArithEpisode, the function checked here), the phrases are the ones
// docs/engine.md lists, and no training episode asks for a holdout pair.
import * as assert from 'assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { mulberry32 } from '../../../src/core/data/prng';
import {
  ARITH_FORMATS,
  ARITH_MIXTURE,
  ARITH_PHRASES,
  arithEpisode,
  drawArithFormat,
  isArithHoldout,
  renderArithEpisode,
  type ArithFormat,
} from '../../../src/core/data/arithChat';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { getRenderer } from '../../../src/core/render/registry';
import { CHAT_GPT, encodeChat } from '../../../src/engine/model/models';

const root = path.join(__dirname, '../../../..');
const tok = new ByteTokenizer();
const chatml = getRenderer('chatml', tok);

/** the rendered text, and the trained spans (weight 1) as text */
function rendered(format: ArithFormat, seed: number) {
  const ep = arithEpisode(format, mulberry32(seed), false);
  const ex = renderArithEpisode(chatml, ep);
  const spans: string[] = [];
  let cur: number[] = [];
  ex.weights.forEach((w, i) => {
    if (w === 1) cur.push(ex.tokens[i]!);
    else if (cur.length) (spans.push(tok.decode(cur)), (cur = []));
  });
  if (cur.length) spans.push(tok.decode(cur));
  return { ep, text: tok.decode(ex.tokens), tokens: ex.tokens, spans };
}

const S = '<|im_start|>';
const E = '<|im_end|>';

describe('arith-chat pretraining formats', () => {
  it('single-turn, with and without the system prompt: trained on the answer only', () => {
    const a = rendered('single', 1);
    const [x, y] = a.ep.sums[0]!;
    assert.strictEqual(a.text, `${S}user\nWhat is ${x} + ${y}?${E}\n${S}assistant\n${x + y}${E}`);
    assert.deepStrictEqual(a.spans, [`${x + y}${E}`]);
    assert.deepStrictEqual(a.tokens, encodeChat(a.text));
    const b = rendered('single_system', 2);
    const [u, v] = b.ep.sums[0]!;
    assert.strictEqual(b.text, `${S}system\nAnswer with the number only.${E}\n${S}user\nWhat is ${u} + ${v}?${E}\n${S}assistant\n${u + v}${E}`);
    assert.deepStrictEqual(b.spans, [`${u + v}${E}`]);
  });

  it('chains: each follow-up adds to the previous answer; every answer is trained', () => {
    const c = rendered('chain3', 3);
    const [[x, y], [t1, z1], [t2, z2]] = c.ep.sums as Array<[number, number]>;
    assert.strictEqual(t1, x! + y!);
    assert.strictEqual(t2, t1! + z1!);
    assert.strictEqual(
      c.text,
      `${S}user\nWhat is ${x} + ${y}?${E}\n${S}assistant\n${t1}${E}\n${S}user\nNow add ${z1}.${E}\n${S}assistant\n${t2}${E}\n` +
        `${S}user\nNow add ${z2}.${E}\n${S}assistant\n${t2! + z2!}${E}`,
    );
    assert.deepStrictEqual(c.spans, [`${t1}${E}`, `${t2}${E}`, `${t2! + z2!}${E}`]);
    assert.strictEqual(rendered('chain2', 4).spans.length, 2);
  });

  it('feedback: the wrong answer is context, only the second attempt is trained', () => {
    const f = rendered('feedback', 5);
    const [x, y] = f.ep.sums[0]!;
    const wrong = Number(f.ep.messages[1]!.content);
    assert.notStrictEqual(wrong, x! + y!);
    assert.strictEqual(f.text, `${S}user\nWhat is ${x} + ${y}?${E}\n${S}assistant\n${wrong}${E}\n${S}user\nWrong, try again.${E}\n${S}assistant\n${x! + y!}${E}`);
    assert.deepStrictEqual(f.spans, [`${x! + y!}${E}`]);
  });

  it('tool use: declaration line, the call and the final answer trained, the result a tool turn', () => {
    const t = rendered('tool', 6);
    const [x, y] = t.ep.sums[0]!;
    assert.ok(x! >= 100 && y! >= 100 && x! <= 9999 && y! <= 9999 && String(x).length === String(y).length);
    const call = `<tool_call>{"name": "add", "arguments": {"a": ${x}, "b": ${y}}}</tool_call>`;
    assert.strictEqual(
      t.text,
      `${S}system\nTools: add(a, b) - Add two integers.${E}\n${S}user\nWhat is ${x} + ${y}?${E}\n${S}assistant\n${call}${E}\n${S}tool\n${x! + y!}${E}\n${S}assistant\n${x! + y!}${E}`,
    );
    assert.deepStrictEqual(t.spans, [`${call}${E}`, `${x! + y!}${E}`]);
    // the sampled call parses back to the call the episode makes
    const parsed = chatml.parseResponse(encodeChat(`${call}${E}`)).message;
    assert.deepStrictEqual(parsed.tool_calls, t.ep.messages[2]!.tool_calls);
  });

  it('the pretraining script builds its data with renderArithEpisode and the chatml renderer, and every episode fits 256 positions', () => {
    const script = fs.readFileSync(path.join(root, 'scripts/pretrain-arith-chat.mjs'), 'utf8');
    assert.match(script, /renderArithEpisode\(renderer, episode\)/);
    assert.match(script, /new ChatmlRenderer\(new ByteTokenizer\(\)\)/);
    const rand = mulberry32(11);
    let longest = 0;
    for (let i = 0; i < 3000; i++) longest = Math.max(longest, renderArithEpisode(chatml, arithEpisode(drawArithFormat(rand), rand, false)).tokens.length);
    assert.ok(longest <= CHAT_GPT.ctx, `longest episode ${longest} tokens`);
    assert.ok(longest > 64, 'the formats use positions past arith-gpt\'s 64');
  });

  it('the mixture covers every format and sums to 1', () => {
    assert.deepStrictEqual(Object.keys(ARITH_MIXTURE).sort(), [...ARITH_FORMATS].sort());
    assert.ok(Math.abs(Object.values(ARITH_MIXTURE).reduce((a, b) => a + b, 0) - 1) < 1e-12);
  });

  it('no training episode asks for a holdout pair; evaluation episodes ask only for holdout pairs', () => {
    const rand = mulberry32(7);
    for (const format of ARITH_FORMATS) {
      for (let i = 0; i < 300; i++) {
        for (const [x, y] of arithEpisode(format, rand, false).sums) assert.ok(!isArithHoldout(x, y), `${format}: ${x} + ${y} is a holdout pair`);
        for (const [x, y] of arithEpisode(format, rand, true).sums) assert.ok(isArithHoldout(x, y), `${format}: ${x} + ${y} is not a holdout pair`);
      }
    }
  });

  it('the holdout of pairs below 100 is the one arith-gpt was trained with (1,029 pairs); larger pairs are held out at about 10 %', () => {
    let small = 0;
    for (let x = 0; x < 100; x++) for (let y = 0; y < 100; y++) if (isArithHoldout(x, y)) small++;
    assert.strictEqual(small, 1029);
    let large = 0;
    for (let x = 100; x < 400; x++) for (let y = 100; y < 400; y++) if (isArithHoldout(x, y)) large++;
    assert.ok(large > 0.08 * 90000 && large < 0.12 * 90000, `${large} of 90,000 three-digit pairs`);
  });

  it('docs/engine.md lists the phrases verbatim', () => {
    const doc = fs.readFileSync(path.join(root, 'docs/engine.md'), 'utf8');
    for (const phrase of [ARITH_PHRASES.question(47, 85), ARITH_PHRASES.followUp(17), ARITH_PHRASES.wrong, ARITH_PHRASES.systemPrompt, 'Tools: add(a, b) - Add two integers.', '<tool_call>{"name": "add", "arguments": {"a": 123, "b": 456}}</tool_call>']) {
      assert.ok(doc.includes(phrase), `docs/engine.md lacks "${phrase}"`);
    }
  });
});
