// Tool calls through the "tinker" chat models in a real extension host (VS Code 1.104 and later: the
// newest host), on a pinned checkpoint of arith-chat (pretrained on chatml's tool format) served by
// the local engine: the model declares tool calling, a request offering an `add` tool gets back a
// tool-call part with the model's arguments, the result goes back as a tool-result part, and the final
// text answers. (On the floor host newerApis.test.ts checks the provider's absence explains itself.)
import * as assert from 'assert';
import * as vscode from 'vscode';
import type { ChatWithCheckpointResult } from '../../../src/vscode/chat/chatCommands';
import { toChatMessages } from '../../../src/vscode/chat/chatModels';
import { chatProviderApi } from '../../../src/vscode/common/newerApis';
import { useLocalEngineAndRunsFolder, waitFor } from '../helpers';

const LIMIT = 180_000;
const BASE = 'tinker-studio/arith-chat';
const ADD: vscode.LanguageModelChatTool = {
  name: 'add',
  description: 'Add two integers.',
  inputSchema: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] },
};

suite('Tool calls through the tinker chat models (an arith-chat checkpoint)', function () {
  this.timeout(LIMIT);
  const suiteState = useLocalEngineAndRunsFolder('tinker-chat-tools-');
  let samplerPath: string;

  suiteSetup(async function () {
    if (!chatProviderApi()) assert.fail(`VS Code ${vscode.version} has no language-model chat provider API: run this suite on the newest host`);
    const service = await suiteState.api().connection.get();
    const tc = await service.createLoraTrainingClient(BASE, { rank: 2, seed: 4 });
    samplerPath = (await (await tc.saveWeightsForSampler('chat-tools')).result()).path!;
    const r = await vscode.commands.executeCommand<ChatWithCheckpointResult>('tinker.chatWithCheckpoint', samplerPath);
    assert.ok(r && r.available, JSON.stringify(r));
  });

  suiteTeardown(async () => {
    if (samplerPath) await vscode.commands.executeCommand('tinker.chat.removeCheckpoints', [samplerPath]);
  });

  test('the model calls add, gets the result back and answers', async () => {
    const [model] = await waitFor('the arith-chat checkpoint among the tinker chat models', async () => {
      const found = await vscode.lm.selectChatModels({ vendor: 'tinker', id: samplerPath });
      return found.length ? found : undefined;
    }, 60_000);
    assert.ok(model);
    const info = await suiteState.api().chatModels.provideLanguageModelChatInformation({ silent: true }, new vscode.CancellationTokenSource().token);
    assert.strictEqual(info.find((m) => m.id === samplerPath)?.capabilities.toolCalling, true, 'chatml has tool calling, so the model declares it');

    const question = vscode.LanguageModelChatMessage.User('What is 123 + 456?');
    const options: vscode.LanguageModelChatRequestOptions = { tools: [ADD], modelOptions: { temperature: 0 } };
    const first = await model.sendRequest([question], options);
    const parts: unknown[] = [];
    for await (const p of first.stream) parts.push(p);
    const calls = parts.filter((p): p is vscode.LanguageModelToolCallPart => p instanceof vscode.LanguageModelToolCallPart);
    assert.strictEqual(calls.length, 1, `one tool-call part: ${JSON.stringify(parts)}`);
    const call = calls[0]!;
    assert.strictEqual(call.name, 'add');
    assert.deepStrictEqual(call.input, { a: 123, b: 456 });
    assert.ok(call.callId.length > 0);

    const input = call.input as { a: number; b: number };
    const result = new vscode.LanguageModelToolResultPart(call.callId, [new vscode.LanguageModelTextPart(String(input.a + input.b))]);
    const second = await model.sendRequest([question, vscode.LanguageModelChatMessage.Assistant([call]), vscode.LanguageModelChatMessage.User([result])], options);
    const answer: string[] = [];
    const more: unknown[] = [];
    for await (const p of second.stream) {
      if (p instanceof vscode.LanguageModelTextPart) answer.push(p.value);
      else more.push(p);
    }
    assert.deepStrictEqual(more, [], 'no further call');
    assert.strictEqual(answer.join(''), '579');
  });

  test('VS Code’s tool-call and tool-result parts map to OpenAI’s tool_calls and tool messages, in order', () => {
    const User = vscode.LanguageModelChatMessageRole.User;
    const Assistant = vscode.LanguageModelChatMessageRole.Assistant;
    const text = (v: string) => new vscode.LanguageModelTextPart(v);
    const mapped = toChatMessages([
      { role: User, name: undefined, content: [text('What is 1 + 2 and 3 + 4?')] },
      { role: Assistant, name: undefined, content: [text('Adding.'), new vscode.LanguageModelToolCallPart('c1', 'add', { a: 1, b: 2 }), new vscode.LanguageModelToolCallPart('c2', 'add', { a: 3, b: 4 })] },
      { role: User, name: undefined, content: [new vscode.LanguageModelToolResultPart('c1', [text('3')]), new vscode.LanguageModelToolResultPart('c2', [text('7')]), text('Now both.')] },
      { role: Assistant, name: undefined, content: [new vscode.LanguageModelToolCallPart('c3', 'add', { a: 3, b: 7 })] },
    ]);
    assert.deepStrictEqual(mapped, [
      { role: 'user', content: 'What is 1 + 2 and 3 + 4?' },
      {
        role: 'assistant',
        content: 'Adding.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } },
          { id: 'c2', type: 'function', function: { name: 'add', arguments: '{"a":3,"b":4}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '3' },
      { role: 'tool', tool_call_id: 'c2', content: '7' },
      { role: 'user', content: 'Now both.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c3', type: 'function', function: { name: 'add', arguments: '{"a":3,"b":7}' } }] },
    ]);
  });
});
