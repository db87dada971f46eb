// Checkpoints as VS Code language models, on the local engine in a real extension host (VS Code 1.104
// and later: the newest host): "Chat with This Checkpoint" pins a sampler checkpoint, which
// vscode.lm.selectChatModels({ vendor: 'tinker' }) then returns beside the engine's base models; it
// answers a request streamed through the engine's OpenAI-compatible endpoint (the same text as a
// non-streamed request with the same seed), stops on cancellation, counts tokens with the model's
// tokenizer, and goes away when removed. "Copy OpenAI-Compatible Endpoint" copies the base URL and the
// model string, and the engine's key only when the person agrees after the warning; the copied values
// work with a plain HTTP request. (On a host without the API, newerApis.test.ts checks the command
// explains itself.)
import * as assert from 'assert';
import * as vscode from 'vscode';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import type { ChatWithCheckpointResult, CopiedEndpoint } from '../../../src/vscode/chat/chatCommands';
import { chatProviderApi } from '../../../src/vscode/common/newerApis';
import { useLocalEngineAndRunsFolder, waitFor } from '../helpers';

const LIMIT = 180_000;
const BASE = 'tinker-studio/arith-gpt';

interface Completion {
  choices: Array<{ message: { content: string } }>;
}

suite('Checkpoints as chat models (vendor "tinker") and the OpenAI-compatible endpoint', function () {
  this.timeout(LIMIT);
  const suiteState = useLocalEngineAndRunsFolder('tinker-chat-models-');
  let samplerPath: string;
  let statePath: string;

  suiteSetup(async function () {
    if (!chatProviderApi()) {
      // this suite is for hosts with the API; the floor host's behaviour is newerApis.test.ts's
      assert.fail(`VS Code ${vscode.version} has no language-model chat provider API: run this suite on the newest host`);
    }
    const service = await suiteState.api().connection.get();
    const tc = await service.createLoraTrainingClient(BASE, { rank: 2, seed: 3 });
    samplerPath = (await (await tc.saveWeightsForSampler('chat-model')).result()).path!;
    statePath = (await (await tc.saveState('chat-state')).result()).path!;
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('tinker.chat.removeCheckpoints', [samplerPath].filter(Boolean));
  });

  async function engineReply(content: string, params: Record<string, unknown>): Promise<string> {
    const ep = await suiteState.api().connection.openAiEndpoint({ withKey: true });
    const res = await fetch(`${ep.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ep.apiKey}` },
      body: JSON.stringify({ model: samplerPath, messages: [{ role: 'user', content }], ...params }),
    });
    assert.strictEqual(res.status, 200, await res.clone().text());
    return ((await res.json()) as Completion).choices[0]!.message.content;
  }

  test('a pinned checkpoint is returned by selectChatModels and answers a streamed request', async () => {
    const r = await vscode.commands.executeCommand<ChatWithCheckpointResult>('tinker.chatWithCheckpoint', samplerPath);
    assert.ok(r && r.available, JSON.stringify(r));
    assert.strictEqual(r.id, samplerPath);
    assert.strictEqual(r.baseModel, BASE);
    assert.ok(suiteState.api().chatModels.pinned().some((p) => p.path === samplerPath), 'kept in the pins');

    const [model] = await waitFor('the checkpoint among the tinker chat models', async () => {
      const found = await vscode.lm.selectChatModels({ vendor: 'tinker', id: samplerPath });
      return found.length ? found : undefined;
    }, 60_000);
    assert.ok(model);
    assert.strictEqual(model.vendor, 'tinker');
    assert.strictEqual(model.family, BASE);
    assert.ok(model.maxInputTokens > 0);
    // the engine's base models are models of the vendor too
    const all = await vscode.lm.selectChatModels({ vendor: 'tinker' });
    assert.ok(all.some((m) => m.id === BASE), `base model listed: ${all.map((m) => m.id).join(', ')}`);

    const params = { temperature: 0, seed: 5, max_tokens: 16 };
    const response = await model.sendRequest([vscode.LanguageModelChatMessage.User('Hello')], { modelOptions: params });
    const parts: string[] = [];
    for await (const t of response.text) parts.push(t);
    const text = parts.join('');
    assert.ok(text.length > 0, 'the checkpoint answered');
    const whole = await engineReply('Hello', params);
    assert.strictEqual(text, whole, 'the stream is the non-streamed reply for the same seed');

    // the provider reports the reply in pieces as the engine streams them (VS Code may join pieces
    // that arrive together before the caller reads them, so they are counted at the provider)
    const reported: string[] = [];
    const cts = new vscode.CancellationTokenSource();
    await suiteState.api().chatModels.provideLanguageModelChatResponse(
      { id: samplerPath, name: r.name, baseModel: BASE, checkpoint: true, family: BASE, version: 'checkpoint', maxInputTokens: 64, maxOutputTokens: 64, capabilities: {} },
      [{ role: vscode.LanguageModelChatMessageRole.User, content: [new vscode.LanguageModelTextPart('Hello')], name: undefined }],
      { modelOptions: params, toolMode: vscode.LanguageModelChatToolMode.Auto },
      { report: (part) => reported.push((part as vscode.LanguageModelTextPart).value) },
      cts.token,
    );
    cts.dispose();
    assert.ok(reported.length >= 2, `streamed in ${reported.length} pieces: ${JSON.stringify(reported)}`);
    assert.strictEqual(reported.join(''), whole);
  });

  test('token counts come from the model’s tokenizer; a cancelled request stops', async () => {
    const [model] = await vscode.lm.selectChatModels({ vendor: 'tinker', id: samplerPath });
    assert.ok(model, 'pinned by the previous test');
    const prompt = 'What is 12 + 30?';
    assert.strictEqual(await model.countTokens(prompt), new ByteTokenizer().encode(prompt).length);
    assert.strictEqual(await model.countTokens(vscode.LanguageModelChatMessage.User(prompt)), new ByteTokenizer().encode(prompt).length);

    const full = await engineReply(prompt, { temperature: 0, seed: 9, max_tokens: 20 });
    const cts = new vscode.CancellationTokenSource();
    const got: string[] = [];
    let failure: unknown;
    try {
      const response = await model.sendRequest([vscode.LanguageModelChatMessage.User(prompt)], { modelOptions: { temperature: 0, seed: 9, max_tokens: 20 } }, cts.token);
      for await (const t of response.text) {
        got.push(t);
        cts.cancel();
      }
    } catch (err) {
      failure = err; // VS Code may end a cancelled request with a CancellationError
    }
    assert.ok(cts.token.isCancellationRequested);
    if (failure !== undefined) assert.match(String(failure), /cancel/i);
    assert.ok(full.startsWith(got.join('')), 'what arrived before the cancel is the start of the reply');
    cts.dispose();

    // at the provider: cancelled at its first piece, it reports nothing more (the engine has sent them all by then)
    const hello = await engineReply('Hello', { temperature: 0, seed: 5, max_tokens: 16 });
    assert.ok(hello.length >= 2, `a reply of several pieces: ${JSON.stringify(hello)}`);
    const stop = new vscode.CancellationTokenSource();
    const reported: string[] = [];
    await suiteState.api().chatModels.provideLanguageModelChatResponse(
      { id: samplerPath, name: 'chat-model', baseModel: BASE, checkpoint: true, family: BASE, version: 'checkpoint', maxInputTokens: 64, maxOutputTokens: 64, capabilities: {} },
      [{ role: vscode.LanguageModelChatMessageRole.User, content: [new vscode.LanguageModelTextPart('Hello')], name: undefined }],
      { modelOptions: { temperature: 0, seed: 5, max_tokens: 16 }, toolMode: vscode.LanguageModelChatToolMode.Auto },
      {
        report: (part) => {
          reported.push((part as vscode.LanguageModelTextPart).value);
          stop.cancel();
        },
      },
      stop.token,
    );
    stop.dispose();
    assert.deepStrictEqual(reported, [hello.slice(0, reported[0]?.length ?? 0)], 'one piece, then nothing');
  });

  test('Copy OpenAI-Compatible Endpoint: base URL and model; the engine’s key only after the warning', async () => {
    const api = suiteState.api();
    const key = (await api.connection.openAiEndpoint({ withKey: true })).apiKey!;
    assert.ok(key);

    // without an answer given, the warning asks; "Copy without Key" leaves the key out
    const asked: string[] = [];
    const release = api.ui.override({
      showWarningMessage: async (message: string) => {
        asked.push(message);
        return 'Copy without Key';
      },
    });
    let copied: CopiedEndpoint | undefined;
    try {
      copied = await vscode.commands.executeCommand<CopiedEndpoint>('tinker.copyOpenAiEndpoint', samplerPath);
    } finally {
      release.dispose();
    }
    assert.strictEqual(asked.length, 1);
    assert.match(asked[0]!, /secret/);
    assert.ok(copied);
    assert.deepStrictEqual({ model: copied.model, keyCopied: copied.keyCopied }, { model: samplerPath, keyCopied: false });
    assert.match(copied.baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    let clip = await vscode.env.clipboard.readText();
    assert.ok(clip.includes(`OPENAI_BASE_URL=${copied.baseUrl}`) && clip.includes(samplerPath), clip);
    assert.ok(!clip.includes(key), 'the key is not copied without consent');

    // with the key: the copied values answer a plain request
    copied = await vscode.commands.executeCommand<CopiedEndpoint>('tinker.copyOpenAiEndpoint', samplerPath, undefined, { copyKey: true });
    assert.ok(copied?.keyCopied);
    clip = await vscode.env.clipboard.readText();
    const base = /^OPENAI_BASE_URL=(.+)$/m.exec(clip)?.[1];
    const copiedKey = /^OPENAI_API_KEY=(.+)$/m.exec(clip)?.[1];
    const model = /^# model: (.+)$/m.exec(clip)?.[1];
    assert.ok(base && copiedKey && model, clip);
    const res = await fetch(`${base}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${copiedKey}` },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'What is 1 + 1?' }], max_tokens: 4 }),
    });
    assert.strictEqual(res.status, 200, await res.clone().text());
    await vscode.env.clipboard.writeText('');
  });

  test('a training-state checkpoint is refused with a reason; removing the pin removes the model', async () => {
    assert.strictEqual(await vscode.commands.executeCommand('tinker.chatWithCheckpoint', statePath), undefined, 'refused (the error is shown)');
    assert.ok(!suiteState.api().chatModels.pinned().some((p) => p.path === statePath));
    const removed = await vscode.commands.executeCommand<string[]>('tinker.chat.removeCheckpoints', [samplerPath]);
    assert.deepStrictEqual(removed, [samplerPath]);
    await waitFor('the checkpoint gone from the chat models', async () => ((await vscode.lm.selectChatModels({ vendor: 'tinker', id: samplerPath })).length === 0 ? true : undefined), 60_000);
  });
});
