// The SFT loop on the embedded engine through the project's client (real HTTP, the real compute
// backend, the randomly initialised byte-level model): a 20-step run lowers training and validation
// NLL and writes the cookbook's run directory; a cancelled run resumes with no step repeated or lost;
// startSftRun runs a spec file and refuses a bad one before creating anything.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { getRenderer } from '../../../src/core/render/registry';
import { ServerGone } from '../../../src/core/runs/loopRuntime';
import { RunWriter } from '../../../src/core/runs/runWriter';
import type { Chat } from '../../../src/core/training/chats';
import { runSft, SftLoopConfig } from '../../../src/core/sft/loop';
import { startSftRun } from '../../../src/core/sft/start';
import type { RunEvent } from '../../../src/core/runs/runEvents';
import { ServiceClient } from '../../../src/core/tinker/client';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { startGrpoRun } from '../../../src/core/grpo/start';
import { EngineClient, TestEngine, appliedSteps, assertNoPartialLines, readCheckpointLines, readMetricsLines, startEngineClient, writeReward } from '../grpo/engineFixture';

const chat = (i: number): Chat => {
  const a = i % 10;
  const b = (i * 7) % 10;
  return { id: `c:${i}`, messages: [{ role: 'user', content: `${a}+${b}=` }, { role: 'assistant', content: String(a + b) }] };
};
const TRAIN = Array.from({ length: 64 }, (_, i) => chat(i));
const VALIDATION = Array.from({ length: 8 }, (_, i) => chat(100 + i));

const config = (o: Partial<SftLoopConfig> = {}): SftLoopConfig => ({
  model: RANDOM_MODEL,
  loraRank: 4,
  learningRate: 1e-2,
  lrSchedule: 'constant',
  warmupSteps: 0,
  batchSize: 8,
  maxSteps: 20,
  trainOnWhat: 'last_assistant_message',
  evalEvery: 5,
  saveEvery: 10,
  seed: 0,
  ...o,
});

describe('SFT loop on the engine', function () {
  this.timeout(300_000);
  let dir: string;
  let engine: TestEngine;
  let env: EngineClient | undefined;
  let service: ServiceClient;
  const renderer = getRenderer('chatml', new ByteTokenizer());

  before(async () => {
    env = await startEngineClient('tinker-sft-loop-');
    ({ dir, engine, service } = env);
  });
  after(async () => {
    await env?.close();
  });

  it('20 steps lower train_mean_nll and test/nll; metrics, checkpoints and the final record in the cookbook layout', async () => {
    const writer = RunWriter.create(path.join(dir, 'runs'), 'lower');
    writer.writeConfig({ run_kind: 'sft' });
    const events: RunEvent[] = [];
    const r = await runSft({ service, config: config(), renderer, train: TRAIN, validation: VALIDATION, writer, onEvent: (e) => events.push(e) });
    assert.strictEqual(r.status, 'completed', r.error);
    assert.strictEqual(r.iterationsRun, 20);
    const lines = readMetricsLines(writer.dir);
    assert.deepStrictEqual(lines.map((l) => l.step), Array.from({ length: 20 }, (_, i) => i));
    for (const key of ['epoch', 'progress', 'learning_rate', 'optim/lr', 'num_sequences', 'num_tokens', 'num_loss_tokens', 'train_mean_nll', 'time/total'])
      assert.strictEqual(typeof lines[0]![key], 'number', key);
    assert.deepStrictEqual(lines.filter((l) => l['test/nll'] !== undefined).map((l) => l.step), [0, 5, 10, 15]);
    assert.strictEqual(lines[19]!.progress, 1);
    assert.strictEqual(lines[8]!.epoch, 1, '8 batches per epoch');
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const train = lines.map((l) => l.train_mean_nll as number);
    const firstTrain = mean(train.slice(0, 3));
    const lastTrain = mean(train.slice(-3));
    assert.ok(lastTrain < firstTrain, `train NLL ${firstTrain} → ${lastTrain}`);
    assert.ok(r.firstTestNll !== undefined && r.lastTestNll !== undefined && r.lastTestNll < r.firstTestNll, `test NLL ${r.firstTestNll} → ${r.lastTestNll}`);
    console.log(`      train_mean_nll (mean of 3) ${firstTrain.toFixed(4)} → ${lastTrain.toFixed(4)}; test/nll ${r.firstTestNll.toFixed(4)} → ${r.lastTestNll.toFixed(4)}`);
    const ckpts = readCheckpointLines(writer.dir);
    assert.deepStrictEqual(ckpts.map((c) => [c.name, c.batch, c.epoch]), [['000010', 10, 1], ['final', 20, 2]]);
    assert.ok(ckpts.every((c) => c.state_path?.startsWith('tinker://') && c.sampler_path?.startsWith('tinker://')));
    assert.deepStrictEqual(events.filter((e) => e.type === 'metrics').length, 20);
    assertNoPartialLines(writer.dir);
  });

  /** Six steps on the training chats, no validation, no checkpoints along the way. */
  const sixSteps = (writer: RunWriter, o: Pick<Parameters<typeof runSft>[0], 'signal' | 'onEvent' | 'resumeFrom'>) =>
    runSft({ service, config: config({ maxSteps: 6, saveEvery: 0, evalEvery: 0 }), renderer, train: TRAIN, validation: [], writer, ...o });

  it('a chat the renderer cannot render (a tool call for a renderer without tool calling) stops the run naming its file and line', async () => {
    const writer = RunWriter.create(path.join(dir, 'runs'), 'no-tools');
    const withCall: Chat = {
      id: 'val.jsonl:3',
      messages: [
        { role: 'user', content: '1+2=' },
        { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'add', arguments: '{"a": 1, "b": 2}' } }] },
      ],
    };
    assert.throws(
      () => runSft({ service, config: config({ maxSteps: 1 }), renderer: getRenderer('role_colon', new ByteTokenizer()), train: TRAIN, validation: [withCall], writer }),
      (err: Error) => err.name === 'DatasetError' && err.message.startsWith('val.jsonl:3: renderer role_colon has no tool calling'),
    );
  });

  it('cancelled after step 2, saves a resume point at 3; the resumed run runs 3..5 once each', async () => {
    const writer = RunWriter.create(path.join(dir, 'runs'), 'resume');
    writer.writeConfig({ run_kind: 'sft' });
    const ac = new AbortController();
    const first = await sixSteps(writer, {
      signal: ac.signal,
      onEvent: (e) => {
        if (e.type === 'metrics' && e.step === 2) ac.abort();
      },
    });
    assert.strictEqual(first.status, 'cancelled');
    assert.strictEqual(first.iterationsRun, 3);
    const resumeFrom = writer.lastStateCheckpoint(); // the writer holds the run directory's lock
    assert.strictEqual(resumeFrom?.batch, 3);
    const second = await sixSteps(writer, { resumeFrom });
    assert.strictEqual(second.status, 'completed', second.error);
    assert.strictEqual(second.iterationsRun, 3);
    assert.deepStrictEqual(readMetricsLines(writer.dir).map((l) => l.step), [0, 1, 2, 3, 4, 5]);
    // progress/tokens_trained: the running sum of the batches' tokens, continued across the resume
    let sum = 0;
    const expected = readMetricsLines(writer.dir).map((l) => (sum += l.num_tokens as number));
    assert.deepStrictEqual(readMetricsLines(writer.dir).map((l) => l['progress/tokens_trained']), expected);
    const [resumeRec, finalRec] = readCheckpointLines(writer.dir);
    const runOf = (p: string) => p.slice('tinker://'.length).split('/')[0]!;
    const applied = await appliedSteps(engine);
    const ofModel = (run: string) => applied.filter((s) => s.model_id === run).map((s) => s.type);
    assert.strictEqual(ofModel(runOf(resumeRec!.state_path!)).filter((t) => t === 'optim_step').length, 3);
    const resumed = ofModel(runOf(finalRec!.state_path!));
    assert.strictEqual(resumed[0], 'load_weights');
    assert.strictEqual(resumed.filter((t) => t === 'optim_step').length, 3, 'steps 3, 4, 5 — none repeated');
    assertNoPartialLines(writer.dir);
  });

  it('cancelled during a validation pass: the step is dropped whole and the resume point is saved at it', async () => {
    const writer = RunWriter.create(path.join(dir, 'runs'), 'cancel-eval');
    writer.writeConfig({ run_kind: 'sft' });
    const ac = new AbortController();
    const c = config({ maxSteps: 4, saveEvery: 0, evalEvery: 1, batchSize: 4 });
    const first = await runSft({
      service,
      config: c,
      renderer,
      train: TRAIN,
      validation: VALIDATION,
      writer,
      signal: ac.signal,
      onEvent: (e) => {
        if (e.type === 'phase' && e.phase === 'eval' && e.step === 1 && e.done === 0) ac.abort();
      },
    });
    assert.strictEqual(first.status, 'cancelled');
    assert.deepStrictEqual(readMetricsLines(writer.dir).map((l) => l.step), [0]);
    const resumeFrom = writer.lastStateCheckpoint(); // the writer holds the run directory's lock
    assert.strictEqual(resumeFrom?.batch, 1, 'a resume checkpoint at the dropped step was saved');
    const second = await runSft({ service, config: c, renderer, train: TRAIN, validation: VALIDATION, writer, resumeFrom });
    assert.strictEqual(second.status, 'completed', second.error);
    assert.deepStrictEqual(readMetricsLines(writer.dir).map((l) => l.step), [0, 1, 2, 3]);
  });

  it('the server gone during a step: the run fails at once with its message; the step in flight is not waited for, no resume point', async () => {
    const writer = RunWriter.create(path.join(dir, 'runs'), 'server-gone');
    writer.writeConfig({ run_kind: 'sft' });
    const ac = new AbortController();
    const message = 'the local engine exited (SIGKILL); Resume continues from the last checkpoint';
    const r = await sixSteps(writer, {
      signal: ac.signal,
      onEvent: (e) => {
        // what the adapter does when the engine process dies: step 2's update is being submitted
        if (e.type === 'phase' && e.phase === 'training' && e.step === 2) ac.abort(new ServerGone(message));
      },
    });
    assert.strictEqual(r.status, 'failed');
    assert.strictEqual(r.error, message);
    assert.deepStrictEqual(readMetricsLines(writer.dir).map((l) => l.step), [0, 1], 'step 2 was waited for and written');
    assert.deepStrictEqual(readCheckpointLines(writer.dir), [], 'a resume point was attempted on a dead server');
    assertNoPartialLines(writer.dir);
  });

  it('startSftRun runs a spec file into a run directory marked as SFT; a bad spec is refused before anything is created', async () => {
    fs.writeFileSync(path.join(dir, 'chats.jsonl'), TRAIN.slice(0, 16).map((c) => JSON.stringify({ messages: c.messages })).join('\n') + '\n');
    const specFile = path.join(dir, 'tiny.sft.json');
    fs.writeFileSync(specFile, JSON.stringify({ model: RANDOM_MODEL, lora_rank: 4, learning_rate: 0.01, batch_size: 4, max_steps: 2, eval_every: 1, save_every: 0, dataset: { path: 'chats.jsonl', validation: { fraction: 0.25 } } }));
    const runsDir = path.join(dir, 'runs-start');
    const connect = () => ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });
    const r = await startSftRun({ specFile, runsDir, connect, cacheDir: path.join(dir, 'cache') });
    assert.strictEqual(r.status, 'completed', r.error);
    assert.match(path.basename(r.runDir), /^tiny-\d{8}-\d{6}$/);
    const cfg = JSON.parse(fs.readFileSync(path.join(r.runDir, 'config.json'), 'utf8')) as Record<string, unknown>;
    assert.strictEqual(cfg.run_kind, 'sft');
    assert.strictEqual(cfg.renderer_name, 'chatml');
    assert.strictEqual(readMetricsLines(r.runDir).length, 2);
    const again = await startSftRun({ resumeDir: r.runDir, runsDir, connect: () => Promise.reject(new Error('must not connect')), cacheDir: path.join(dir, 'cache') });
    assert.deepStrictEqual(again, { kind: 'sft', runDir: r.runDir, status: 'completed', iterationsRun: 0 });

    const bad = path.join(dir, 'bad.sft.json');
    fs.writeFileSync(bad, JSON.stringify({ model: RANDOM_MODEL, batch_sise: 4, dataset: { path: 'missing.jsonl' } }));
    const badRuns = path.join(dir, 'runs-bad');
    await assert.rejects(startSftRun({ specFile: bad, runsDir: badRuns, connect, cacheDir: path.join(dir, 'cache') }), /bad\.sft\.json: batch_sise: unknown field \(did you mean "batch_size"\?\)/);
    assert.ok(!fs.existsSync(badRuns));
  });
  it('SFT → GRPO: a GRPO spec with load_checkpoint_path starts from the SFT run\'s final weights', async () => {
    const writer = RunWriter.create(path.join(dir, 'runs'), 'sft-then-grpo');
    writer.writeConfig({ run_kind: 'sft' });
    const sft = await runSft({ service, config: config({ maxSteps: 2, saveEvery: 0, evalEvery: 0 }), renderer, train: TRAIN, validation: [], writer });
    assert.strictEqual(sft.status, 'completed', sft.error);
    const final = readCheckpointLines(writer.dir).find((c) => c.name === 'final')!;
    const work = fs.mkdtempSync(path.join(dir, 'grpo-'));
    fs.writeFileSync(path.join(work, 'train.jsonl'), '{"question":"1+1=","answer":2}\n{"question":"2+2=","answer":4}\n');
    writeReward(work);
    const specFile = path.join(work, 'after-sft.grpo.json');
    fs.writeFileSync(specFile, JSON.stringify({ model: RANDOM_MODEL, renderer: 'chatml', load_checkpoint_path: final.state_path, lora_rank: 4, learning_rate: 0.001, groups_per_batch: 2, group_size: 2, max_tokens: 3, iterations: 1, save_every: 0, eval_every: 0, dataset: { path: 'train.jsonl' }, reward: { file: 'reward.py', workers: 1 } }));
    const connect = () => ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });
    const grpo = await startGrpoRun({ specFile, runsDir: path.join(work, 'runs'), connect, cacheDir: path.join(dir, 'cache') });
    assert.strictEqual(grpo.status, 'completed', grpo.error);
    const grpoModel = readCheckpointLines(grpo.runDir)[0]!.state_path!.slice('tinker://'.length).split('/')[0]!;
    const ops = (await appliedSteps(engine)).filter((s) => s.model_id === grpoModel).map((s) => s.type);
    assert.strictEqual(ops[0], 'load_weights', `the GRPO model starts by loading the SFT weights (ops: ${ops.join(', ')})`);
  });
});
