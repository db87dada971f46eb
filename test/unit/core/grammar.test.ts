// The transcript grammar tokenised by the same engine VS Code uses (vscode-textmate + oniguruma).
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as oniguruma from 'vscode-oniguruma';
import * as textmate from 'vscode-textmate';

const root = path.resolve(__dirname, '../../../..');

async function loadGrammar(): Promise<textmate.IGrammar> {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (sources: string[]) => new oniguruma.OnigScanner(sources),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) => {
      if (scope !== 'text.tinker.transcript') return null;
      const file = path.join(root, 'syntaxes/tinker-transcript.tmLanguage.json');
      return textmate.parseRawGrammar(fs.readFileSync(file, 'utf8'), file);
    },
  });
  const g = await registry.loadGrammar('text.tinker.transcript');
  assert.ok(g, 'grammar loads');
  return g;
}

/** [text, innermost scope] pairs of each line's tokens, stack carried across lines. */
function tokenize(grammar: textmate.IGrammar, text: string): Array<[string, string[]]> {
  let stack = textmate.INITIAL;
  const out: Array<[string, string[]]> = [];
  for (const line of text.split('\n')) {
    const r = grammar.tokenizeLine(line, stack);
    for (const t of r.tokens) out.push([line.slice(t.startIndex, t.endIndex), t.scopes]);
    stack = r.ruleStack;
  }
  return out;
}

function scopeOf(tokens: Array<[string, string[]]>, text: string): string[] {
  const t = tokens.find(([s]) => s === text);
  assert.ok(t, `a token "${text}"`);
  return t[1];
}

describe('transcript grammar', () => {
  let grammar: textmate.IGrammar;
  before(async () => {
    grammar = await loadGrammar();
  });

  it('marks ChatML role headers, special tokens and think blocks', () => {
    const tokens = tokenize(grammar, '<|im_start|>assistant\n<think>\nlet me add\n</think>\n\n42<|im_end|>');
    assert.ok(scopeOf(tokens, '<|im_start|>').includes('keyword.control.special-token.tinker'));
    assert.ok(scopeOf(tokens, 'assistant').includes('entity.name.tag.role.tinker'));
    assert.ok(scopeOf(tokens, '<think>').includes('punctuation.definition.thinking.begin.tinker'));
    assert.ok(scopeOf(tokens, 'let me add').includes('comment.block.thinking.tinker'), 'thinking spans lines');
    assert.ok(scopeOf(tokens, '</think>').includes('punctuation.definition.thinking.end.tinker'));
    assert.ok(!scopeOf(tokens, '42').includes('comment.block.thinking.tinker'), 'the answer is outside the block');
    assert.ok(scopeOf(tokens, '<|im_end|>').includes('keyword.control.special-token.tinker'));
  });

  it('marks Llama 3 headers, role-colon headers and DeepSeek tokens', () => {
    const llama = tokenize(grammar, '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>');
    assert.ok(scopeOf(llama, 'user').includes('entity.name.tag.role.tinker'));
    assert.ok(scopeOf(llama, '<|eot_id|>').includes('keyword.control.special-token.tinker'));
    const colon = tokenize(grammar, 'User: What is 4 + 5?\n\nAssistant: 9');
    assert.ok(scopeOf(colon, 'Assistant').includes('entity.name.tag.role.tinker'));
    const deepseek = tokenize(grammar, '<｜begin▁of▁sentence｜><｜User｜>hi<｜Assistant｜></think>');
    assert.ok(scopeOf(deepseek, '<｜begin▁of▁sentence｜>').includes('keyword.control.special-token.tinker'));
  });

  it('leaves plain text unscoped', () => {
    const tokens = tokenize(grammar, 'What is 12 + 30?');
    assert.deepStrictEqual(tokens.map(([, s]) => s), [['text.tinker.transcript']]);
  });
});
