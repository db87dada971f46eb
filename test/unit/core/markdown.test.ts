// Untrusted text in hovers and tooltips renders as text: rendered by a real Markdown renderer with
// HTML and linkify on (more permissive than VS Code's hovers), a completion that carries a link, a
// remote image, HTML, a command link or a bare URL yields none of them.
import * as assert from 'assert';
import MarkdownIt from 'markdown-it';
import { codeSpan, escapeMarkdown } from '../../../src/core/text/markdown';

const md = new MarkdownIt({ html: true, linkify: true });
const ATTACKS = [
  'Sure! [click here](https://attacker.example/steal) to continue',
  '![pixel](https://attacker.example/track.png)',
  '<img src="https://attacker.example/x.png"> <a href="command:workbench.action.terminal.new">run</a>',
  'see https://attacker.example/page and www.attacker.example',
  '[cmd](command:tinker.clearApiKey) `code` | pipe * star _under_',
];

function rendered(markdown: string): string {
  return md.render(markdown);
}

describe('untrusted text in Markdown', () => {
  for (const text of ATTACKS) {
    it(`shows ${JSON.stringify(text.slice(0, 40))}… as text (escaped and as a code span)`, () => {
      for (const [how, out] of [
        ['escaped', rendered(`**run** ${escapeMarkdown(text)}`)],
        ['code span in a table cell', rendered(`| a | b |\n|---|---|\n| ${codeSpan(text, 200)} | x |`)],
      ] as const) {
        assert.ok(!/<a[\s>]/i.test(out), `${how}: no link in ${out}`);
        assert.ok(!/<img[\s>]/i.test(out), `${how}: no image in ${out}`);
        assert.ok(!/<(script|iframe)/i.test(out), `${how}: no HTML in ${out}`);
      }
    });
  }

  it('a code span keeps a table row whole and cuts long text', () => {
    const out = rendered(`| a | b |\n|---|---|\n| ${codeSpan('x | y `z`', 200)} | tail |`);
    assert.match(out, /<td>tail<\/td>/, 'the pipe inside did not split the row');
    assert.strictEqual(codeSpan('abcdefghij', 5), '`abcd…`');
  });
});
