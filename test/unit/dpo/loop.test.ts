// The DPO loop on the embedded engine through the project's client (real HTTP, the real compute
// backend, the randomly initialised byte-level model): the reference is the weights at step 0 (so
// step 0's log-ratios are 0 through the engine), pair accuracy rises and the loss falls, the run
// directory is in the cookbook layout, a cancelled run resumes with the same reference and no step
// repeated, and startDpoRun runs a spec file.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { getRenderer } from '../../../src/core/render/registry';
import { RunWriter } from '../../../src/core/runs/runWriter';
import { DpoLoopConfig, PAIR_MARGINS_FILE, REFERENCE_CHECKPOINT, runDpo } from '../../../src/core/dpo/loop';
import type { PreferencePair } from '../../../src/core/dpo/pairs';
import { startDpoRun } from '../../../src/core/dpo/start';
import { ServiceClient } from '../../../src/core/tinker/client';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { EngineClient, TestEngine, appliedSteps, assertNoPartialLines, readCheckpointLines, readJsonl, readMetricsLines, startEngineClient } from '../grpo/engineFixture';

const pair = (i: number): PreferencePair => {
  const a = i % 10;
  const b = (i * 7) % 10;
  return { id: `p:${i}`, prompt: [{ role: 'user', content: `${a}+${b}=` }], chosen: [{ role: 'assistant', content: String(a + b) }], rejected: [{ role: 'assistant', content: String(a + b + 3) }] };
};
const TRAIN = Array.from({ length: 48 }, (_, i) => pair(i));
const VALIDATION = Array.from({ length: 8 }, (_, i) => pair(100 + i));

const config = (o: Partial<DpoLoopConfig> = {}): DpoLoopConfig => ({
  model: RANDOM_MODEL,
  loraRank: 4,
  learningRate: 5e-3,
  lrSchedule: 'constant',
  beta: 0.5,
  nllWeight: 0,
  batchSize: 8,
  maxSteps: 12,
  evalEvery: 4,
  saveEvery: 6,
  seed: 0,
  ...o,
});

describe('DPO loop on the engine', function () {
  this.timeout(300_000);
  let dir: string;
  let engine: TestEngine;
  let env: EngineClient | undefined;
  let service: ServiceClient;
  const renderer = getRenderer('chatml', new ByteTokenizer());

  before(async () => {
    env = await startEngineClient('tinker-dpo-loop-');
    ({ dir, engine, service } = env);
  });
  after(async () => {
    await env?.close();
  });

  it('step 0 has log-ratios 0 (reference = policy); accuracy rises, the loss falls; the cookbook layout', async () => {
    const writer = RunWriter.create(path.join(dir, 'runs'), 'learn');
    writer.writeConfig({ run_kind: 'dpo' });
    const r = await runDpo({ service, config: config(), renderer, train: TRAIN, validation: VALIDATION, writer });
    assert.strictEqual(r.status, 'completed', r.error);
    assert.strictEqual(r.iterationsRun, 12);
    const lines = readMetricsLines(writer.dir);
    assert.deepStrictEqual(lines.map((l) => l.step), Array.from({ length: 12 }, (_, i) => i));
    for (const key of ['dpo_loss', 'accuracy', 'margin', 'chosen_reward', 'rejected_reward', 'num_pairs', 'learning_rate', 'optim/lr', 'num_tokens', 'progress', 'epoch', 'time/total', 'progress/tokens_trained'])
      assert.strictEqual(typeof lines[0]![key], 'number', key);
    assert.strictEqual(lines[0]!.num_pairs, 8);
    // the reference is the step-0 sampler: the policy's log-probs (trainer forward) equal the reference's (sampler prompt log-probs)
    const l0 = lines[0]!;
    assert.ok(Math.abs(l0.chosen_reward as number) < 1e-4 && Math.abs(l0.rejected_reward as number) < 1e-4, `step 0 rewards ${l0.chosen_reward}, ${l0.rejected_reward}`);
    assert.ok(Math.abs((l0.dpo_loss as number) - Math.log(2)) < 1e-4, `step 0 loss ${l0.dpo_loss}`);
    assert.ok(Math.abs((l0['test/chosen_reward'] as number) ?? NaN) < 1e-4, 'validation at step 0: log-ratios 0');
    for (const l of lines) assert.ok(Math.abs((l.margin as number) - ((l.chosen_reward as number) - (l.rejected_reward as number))) < 1e-6);
    assert.deepStrictEqual(lines.filter((l) => l['test/dpo_loss'] !== undefined).map((l) => l.step), [0, 4, 8]);
    assert.ok(lines.every((l) => l['test/dpo_loss'] === undefined || typeof l['test/nll'] === 'number'));
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const loss = lines.map((l) => l.dpo_loss as number);
    const acc = lines.map((l) => l.accuracy as number);
    console.log(`      dpo_loss (mean of 3) ${mean(loss.slice(0, 3)).toFixed(4)} → ${mean(loss.slice(-3)).toFixed(4)}; accuracy ${mean(acc.slice(0, 3)).toFixed(3)} → ${mean(acc.slice(-3)).toFixed(3)}; test/accuracy ${lines[0]!['test/accuracy']} → ${lines[8]!['test/accuracy']}`);
    assert.ok(mean(loss.slice(-3)) < mean(loss.slice(0, 3)), 'the loss falls');
    assert.ok(mean(acc.slice(-3)) > 0.5, 'most training pairs are ranked right at the end');
    assert.ok((lines[8]!['test/margin'] as number) > 0, 'validation margin positive at step 8');
    const ckpts = readCheckpointLines(writer.dir);
    assert.deepStrictEqual(ckpts.map((c) => [c.name, c.batch]), [[REFERENCE_CHECKPOINT, 0], ['000006', 6], ['final', 12]]);
    assert.ok(ckpts[0]!.sampler_path?.startsWith('tinker://') && ckpts[0]!.state_path === undefined, 'the reference is a sampler only');
    const margins = readJsonl(path.join(writer.dir, 'iteration_000004', PAIR_MARGINS_FILE)) as Array<{ pair: string; split: string; margin: number }>;
    assert.strictEqual(margins.filter((m) => m.split === 'validation').length, 8);
    assert.strictEqual(margins.filter((m) => m.split === 'train').length, 8);
    assertNoPartialLines(writer.dir);
  });

  it('cancelled after step 2 and resumed: the same reference, steps 3.. once each', async () => {
    const writer = RunWriter.create(path.join(dir, 'runs'), 'resume');
    writer.writeConfig({ run_kind: 'dpo' });
    const ac = new AbortController();
    const c = config({ maxSteps: 5, saveEvery: 0, evalEvery: 0 });
    const first = await runDpo({ service, config: c, renderer, train: TRAIN, validation: [], writer, signal: ac.signal, onEvent: (e) => e.type === 'metrics' && e.step === 2 && ac.abort() });
    assert.strictEqual(first.status, 'cancelled');
    const resumeFrom = writer.lastStateCheckpoint();
    assert.strictEqual(resumeFrom?.batch, 3);
    const second = await runDpo({ service, config: c, renderer, train: TRAIN, validation: [], writer, resumeFrom });
    assert.strictEqual(second.status, 'completed', second.error);
    assert.deepStrictEqual(readMetricsLines(writer.dir).map((l) => l.step), [0, 1, 2, 3, 4]);
    const refs = readCheckpointLines(writer.dir).filter((x) => x.name === REFERENCE_CHECKPOINT);
    assert.strictEqual(refs.length, 1, 'the resumed run made no new reference');
    // step 3 after the resume still measures against the step-0 reference: its rewards are not 0
    const l3 = readMetricsLines(writer.dir)[3]!;
    assert.ok(Math.abs(l3.chosen_reward as number) > 1e-3, `step 3 chosen_reward ${l3.chosen_reward} (a fresh reference would give 0)`);
    const runOf = (p: string) => p.slice('tinker://'.length).split('/')[0]!;
    const finalRec = readCheckpointLines(writer.dir).find((x) => x.name === 'final')!;
    const resumed = (await appliedSteps(engine)).filter((s) => s.model_id === runOf(finalRec.state_path!)).map((s) => s.type);
    assert.strictEqual(resumed.filter((t) => t === 'optim_step').length, 2, 'steps 3 and 4 — none repeated');
  });

  it('startDpoRun runs a spec file (pairs with a bad line and a tie skipped and logged); a run without its reference record refuses to resume', async () => {
    const lines = [
      ...TRAIN.slice(0, 12).map((p) => JSON.stringify({ prompt: p.prompt[0]!.content, chosen: p.chosen[0]!.content, rejected: p.rejected[0]!.content })),
      '{"prompt": "1+1=", "chosen": "2"}',
      JSON.stringify({ comparison: { prompt_conversation: [{ role: 'user', content: 'q' }], completion_A: 'a', completion_B: 'b' }, label: 'Tie' }),
    ];
    fs.writeFileSync(path.join(dir, 'pairs.jsonl'), lines.join('\n') + '\n');
    const specFile = path.join(dir, 'tiny.dpo.json');
    fs.writeFileSync(specFile, JSON.stringify({ model: RANDOM_MODEL, lora_rank: 4, learning_rate: 0.005, batch_size: 4, max_steps: 2, eval_every: 1, save_every: 0, dataset: { path: 'pairs.jsonl', validation: { fraction: 0.25 } } }));
    const runsDir = path.join(dir, 'runs-start');
    const connect = () => ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });
    const log: string[] = [];
    const r = await startDpoRun({ specFile, runsDir, connect, cacheDir: path.join(dir, 'cache'), log: (l) => log.push(l) });
    assert.strictEqual(r.status, 'completed', r.error);
    assert.ok(log.some((l) => /skipped pairs\.jsonl:13: rejected/.test(l)), log.join('\n'));
    assert.ok(log.some((l) => /skipped pairs\.jsonl:14: label "Tie"/.test(l)), log.join('\n'));
    assert.ok(log.some((l) => /^9 train pairs, 3 validation pairs/.test(l)), log.join('\n'));
    const cfg = JSON.parse(fs.readFileSync(path.join(r.runDir, 'config.json'), 'utf8')) as Record<string, unknown>;
    assert.strictEqual(cfg.run_kind, 'dpo');
    assert.strictEqual(cfg.dpo_beta, 0.1);
    assert.strictEqual(readMetricsLines(r.runDir).length, 2);

    // a run directory whose reference record is gone cannot resume (it would silently change the loss)
    const ckptFile = path.join(r.runDir, 'checkpoints.jsonl');
    const finalRec = readCheckpointLines(r.runDir).find((x) => x.name === 'final')!;
    fs.writeFileSync(ckptFile, JSON.stringify({ name: '000001', batch: 1, state_path: finalRec.state_path }) + '\n');
    const again = await startDpoRun({ resumeDir: r.runDir, runsDir, connect, cacheDir: path.join(dir, 'cache') });
    assert.strictEqual(again.status, 'failed');
    assert.match(again.error ?? '', /checkpoints\.jsonl has no "reference" record.*cannot resume/);
  });
});
