// "Search Checkpoints…" in a real extension host on the local engine: an SFT run whose spec carries
// checkpoint_metadata saves state and sampler checkpoints; the command, given the filters (or typed
// into its input box, which refuses a malformed line), lists the run's matches newest first by
// metadata, type and base model, none for a value nobody saved, and choosing a match in its quick pick
// copies its path.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { SftRunResult } from '../../../src/core/runs/runEvents';
import { useLocalEngineAndRunsFolder, waitFor } from '../helpers';

interface SearchResult {
  matches: string[];
  next?: number;
}

suite('Search Checkpoints… (metadata, type and base model filters over the server listing)', function () {
  this.timeout(240_000);
  const suiteState = useLocalEngineAndRunsFolder('tinker-ckpt-search-');
  const tag = `search-${process.pid}-${Date.now()}`;
  let specDir: string;
  let run: SftRunResult;
  let recorded: Array<{ name: string; state_path?: string; sampler_path?: string }>;

  suiteSetup(async () => {
    specDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-search-spec-'));
    const chats = Array.from({ length: 8 }, (_, i) => JSON.stringify({ messages: [{ role: 'user', content: `What is ${i} + 1?` }, { role: 'assistant', content: String(i + 1) }] }));
    fs.writeFileSync(path.join(specDir, 'chats.jsonl'), chats.join('\n') + '\n');
    const spec = {
      name: 'searchable',
      backend: 'local',
      model: 'tinker-studio/arith-gpt',
      renderer: 'chatml',
      lora_rank: 2,
      learning_rate: 0.004,
      batch_size: 4,
      max_steps: 2,
      eval_every: 0,
      save_every: 1,
      checkpoint_metadata: { team: tag, purpose: 'host test' },
      dataset: { path: 'chats.jsonl' },
    };
    const file = path.join(specDir, 'searchable.sft.json');
    fs.writeFileSync(file, JSON.stringify(spec, null, 2));
    const r = await vscode.commands.executeCommand<SftRunResult>('tinker.startSftRun', vscode.Uri.file(file));
    assert.ok(r && r.status === 'completed', r?.error);
    run = r;
    recorded = fs
      .readFileSync(path.join(run.runDir, 'checkpoints.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { name: string; state_path?: string; sampler_path?: string });
    assert.ok(recorded.some((c) => c.sampler_path) && recorded.some((c) => c.state_path), 'the run saved both kinds');
  });
  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    fs.rmSync(specDir, { recursive: true, force: true });
  });

  const search = async (query: string) => {
    const r = await vscode.commands.executeCommand<SearchResult>('tinker.checkpoints.search', { query });
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    assert.ok(r, `the search "${query}" returned its first page`);
    return r;
  };
  const samplers = () => recorded.flatMap((c) => (c.sampler_path ? [c.sampler_path] : []));
  const states = () => recorded.flatMap((c) => (c.state_path ? [c.state_path] : []));

  test('metadata and type filters list exactly the run’s matching checkpoints', async () => {
    const byTag = await search(`team=${tag}`);
    assert.deepStrictEqual([...byTag.matches].sort(), [...samplers(), ...states()].sort(), 'every checkpoint of the run, and only those');
    assert.strictEqual(byTag.next, undefined, 'one page');

    const onlySamplers = await search(`team=${tag} type:sampler`);
    assert.deepStrictEqual([...onlySamplers.matches].sort(), [...samplers()].sort());
    const onlyStates = await search(`team=${tag} type:training`);
    assert.deepStrictEqual([...onlyStates.matches].sort(), [...states()].sort());

    // the run's own keys go with every save
    const byRun = await search(`team=${tag} run_name=${path.basename(run.runDir)} spec_file=searchable.sft.json purpose="host test"`);
    assert.strictEqual(byRun.matches.length, samplers().length + states().length);
    const final = recorded.find((c) => c.name === 'final');
    assert.ok(final?.sampler_path, 'a final checkpoint');
    const newest = await search(`team=${tag} type:sampler`);
    assert.strictEqual(newest.matches[0], final.sampler_path, 'newest first');
  });

  test('base model filter, and no match for metadata nobody saved', async () => {
    assert.strictEqual((await search(`team=${tag} base:tinker-studio/arith-gpt`)).matches.length, samplers().length + states().length);
    assert.deepStrictEqual((await search(`team=${tag} base:no/such-model`)).matches, []);
    assert.deepStrictEqual((await search(`team=${tag}-nobody`)).matches, []);
  });

  test('typed in the input box: a malformed line is refused there; choosing a match copies its path', async () => {
    const api = suiteState.api();
    const problems: Array<string | undefined> = [];
    const release = api.ui.override({
      showInputBox: async (options: vscode.InputBoxOptions) => {
        for (const line of ['type:', 'colour:blue', `team=${tag} type:sampler`]) {
          const v = await options.validateInput?.(line);
          problems.push(typeof v === 'string' ? v : v === undefined || v === null ? undefined : v.message);
        }
        return `team=${tag} type:sampler`;
      },
    });
    await vscode.env.clipboard.writeText('');
    let r: SearchResult | undefined;
    try {
      r = await vscode.commands.executeCommand<SearchResult>('tinker.checkpoints.search');
    } finally {
      release.dispose();
    }
    assert.match(String(problems[0]), /has no value/);
    assert.match(String(problems[1]), /unknown filter "colour:"/);
    assert.strictEqual(problems[2], undefined, 'a good line passes');
    assert.ok(r && r.matches.length === samplers().length);
    // the quick pick is open with the matches, the newest active: Enter copies its path
    const first = r.matches[0]!;
    await waitFor('the path copied from the quick pick', async () => {
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      const clip = await vscode.env.clipboard.readText();
      return clip === first ? clip : undefined;
    }, 30_000);
  });
});
