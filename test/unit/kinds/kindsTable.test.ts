// The kinds table as the seam every kind plugs into: a kind that exists only in the tests (toyKind.ts,
// one registerKind call) is started from the CLI's code path, swept, driven by the agent tools and listed in Compare Runs
// with its own result columns, with no shared file edited; a sweep over a DPO or SFT spec runs that
// kind and ranks by that kind's metric; a metric the kind does not log is refused before any run,
// naming the kind's metrics. All on the embedded engine (real HTTP, the random byte-level model).
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runKindCommand } from '../../../src/cli/runKind';
import { heldKindOf, wireRuns } from '../../../src/core/experiments/compareView';
import { runSweep } from '../../../src/core/experiments/runSweep';
import { registerKind, runKind, runKindIds } from '../../../src/core/kinds/registry';
import { readMetricsRowsSync } from '../../../src/core/runs/runDirectory';
import { runKindIdOfFile } from '../../../src/core/spec/kinds';
import { ServiceClient } from '../../../src/core/tinker/client';
import type { RunColumns } from '../../../src/protocol/compareData';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { startTestEngine, TestEngine } from '../grpo/engineFixture';
import { TOY_KIND } from './toyKind';
import { TrainingSession } from '../../../src/core/agent/session';
import { AGENT_TOOLS, agentTool, agentTools } from '../../../src/core/agent/tools';

const EXAMPLES = path.join(__dirname, '..', '..', '..', '..', 'examples');

function columnsOf(runDir: string): RunColumns {
  const rows = readMetricsRowsSync(runDir);
  const cols: Record<string, (number | null)[]> = {};
  rows.forEach((r, i) => {
    for (const [k, v] of Object.entries(r)) if (k !== 'step' && typeof v === 'number') (cols[k] ??= Array<number | null>(rows.length).fill(null))[i] = v;
  });
  return { steps: rows.map((r) => r.step), cols };
}

describe('the kinds table: every kind through one seam', function () {
  this.timeout(300_000);
  let dir: string;
  let engine: TestEngine;
  const connect = () => ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-kinds-'));
    engine = await startTestEngine(dir);
  });
  after(async () => {
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('a kind registered by one table row (test/unit/kinds/toyKind.ts)', () => {
    let unregister: (() => void) | undefined;
    before(() => {
      unregister = registerKind(TOY_KIND);
      fs.writeFileSync(path.join(dir, 'hello.toy.json'), JSON.stringify({ steps: 2, lora_rank: 4 }));
    });
    after(() => unregister?.());

    it('is in the table by its id and extension; an id no kind has is an error naming the kinds', async () => {
      assert.deepStrictEqual(runKindIds(), ['grpo', 'sft', 'dpo', 'toy']);
      assert.strictEqual(runKindIdOfFile('/w/hello.toy.json'), 'toy');
      assert.strictEqual((await runKind('toy')).row.label, 'Toy');
      await assert.rejects(runKind('rm'), /no kind of run is called "rm" \(the kinds are "grpo", "sft", "dpo", "toy"\)/);
    });

    it('starts from the CLI code path: its report, the status line in its unit, exit 0', async () => {
      const out: string[] = [];
      const code = await runKindCommand('toy', { specFile: path.join(dir, 'hello.toy.json'), runsDir: path.join(dir, 'runs-cli'), cacheDir: path.join(dir, 'cache'), connect }, { stdout: (t) => out.push(t), stderr: (t) => out.push(t), redact: (t) => t });
      assert.strictEqual(code, 0, out.join(''));
      const text = out.join('');
      assert.match(text, /^toy\/nll \d+\.\d{4}\n/);
      const m = /run completed: (\S+) \(2 steps this time\)/.exec(text);
      assert.ok(m, text);
      const runDir = m[1]!;
      assert.deepStrictEqual(readMetricsRowsSync(runDir).map((r) => [r.step, typeof r['toy/nll']]), [[0, 'number'], [1, 'number']]);
      assert.strictEqual(JSON.parse(fs.readFileSync(path.join(runDir, 'config.json'), 'utf8')).run_kind, 'toy');
    });

    it('is swept: each point a run of the kind, ranked by its metric; a metric it does not log is refused naming its metrics', async () => {
      const file = path.join(dir, 'lr.sweep.json');
      fs.writeFileSync(file, JSON.stringify({ base: 'hello.toy.json', method: 'grid', parameters: { learning_rate: { values: [0.001, 0.004] } }, metric: { name: 'toy/nll', goal: 'minimize' } }));
      const runsDir = path.join(dir, 'runs-sweep');
      const r = await runSweep({ sweepFile: file, runsDir, connect, cacheDir: path.join(dir, 'cache') });
      assert.deepStrictEqual(r.outcomes.map((o) => [o.name, o.status, o.error]), [['learning_rate_0.001', 'completed', undefined], ['learning_rate_0.004', 'completed', undefined]]);
      assert.deepStrictEqual(r.ranking.map((x) => x.rank).sort(), [1, 2]);
      assert.ok(r.ranking.every((x) => typeof x.best === 'number'));
      for (const o of r.outcomes) assert.strictEqual(JSON.parse(fs.readFileSync(path.join(o.dir, 'config.json'), 'utf8')).run_kind, 'toy');

      // Compare Runs lists them with the kind's own result column
      const held = await Promise.all(
        r.outcomes.map(async (o, i) => {
          const config = JSON.parse(fs.readFileSync(path.join(o.dir, 'config.json'), 'utf8')) as Record<string, unknown>;
          return { id: o.dir, color: i, config, kind: await heldKindOf(config), columns: columnsOf(o.dir), status: 'completed' as const };
        }),
      );
      const wire = wireRuns(held, r.manifest);
      assert.deepStrictEqual(wire.map((w) => [w.results.kind, w.resultColumns]), [['toy', [{ id: 'finalToyNll', label: 'final toy NLL' }]], ['toy', [{ id: 'finalToyNll', label: 'final toy NLL' }]]]);
      assert.ok(wire.every((w) => typeof w.results.values.finalToyNll === 'number' && w.results.steps === 2));
      assert.deepStrictEqual(wire.map((w) => w.rank).sort(), [1, 2]);

      const bad = path.join(dir, 'bad.sweep.json');
      fs.writeFileSync(bad, JSON.stringify({ base: 'hello.toy.json', method: 'grid', parameters: { learning_rate: { values: [0.001, 0.004] } }, metric: { name: 'test/accuracy', goal: 'maximize' } }));
      await assert.rejects(runSweep({ sweepFile: bad, runsDir, connect, cacheDir: path.join(dir, 'cache') }), (err: Error) => {
        assert.match(err.message, /metric\.name: a Toy run does not log "test\/accuracy"; it logs toy\/nll; and any key starting with "optim\/", "time\/", "progress\/"/);
        return true;
      });
      assert.ok(!fs.existsSync(path.join(runsDir, 'bad')), 'nothing started');
    });

    it('is in the agent tool table while registered: init_toy and train_toy_step after the built-in tools, gone with the kind', () => {
      assert.deepStrictEqual(
        agentTools().map((t) => t.name),
        [...AGENT_TOOLS.map((t) => t.name), 'init_toy', 'train_toy_step'],
      );
      unregister?.();
      unregister = undefined;
      try {
        assert.deepStrictEqual(agentTools().map((t) => t.name), AGENT_TOOLS.map((t) => t.name));
        assert.strictEqual(agentTool('init_toy'), undefined);
      } finally {
        unregister = registerKind(TOY_KIND);
      }
    });

    it('is driven by the agent tools: init_toy, train_toy_step, a built-in kind\'s tool refused naming the right one, finish', async () => {
      const session = new TrainingSession({ runsDir: path.join(dir, 'runs-agent'), cacheDir: path.join(dir, 'cache'), baseDir: dir, connect, idleMs: 0 });
      try {
        const init = agentTool('init_toy');
        const train = agentTool('train_toy_step');
        assert.ok(init && train, 'the toy kind\'s tools are in the agent tool table');
        await assert.rejects(init!.run(session, { spec_file: 'hello.toy.json', iterations: 3 }), /init_toy: unknown argument "iterations"/);
        const started = await init!.run(session, { spec_file: 'hello.toy.json' });
        assert.match(started.text, /^session ready: Toy hello on .*, 2 steps of "toy kinds arrive as one row"\. Nothing trained yet: call train_toy_step\./);
        const trained = await train!.run(session, { num_steps: 2 });
        assert.match(trained.text, /^steps 0–1 of 2 done/);
        const runDir = (started.value as { run_dir: string }).run_dir;
        assert.deepStrictEqual(readMetricsRowsSync(runDir).map((r) => r.step), [0, 1]);
        const grpoStep = AGENT_TOOLS.find((t) => t.name === 'train_grpo_step')!;
        await assert.rejects(grpoStep.run(session, {}), /the session is a Toy run: call train_toy_step \(or init_grpo for a GRPO run\)/);
        const done = await session.finish();
        assert.match(done.text, /^finished hello-\S+ after 2 steps\n/);
        assert.ok(fs.readFileSync(path.join(runDir, 'checkpoints.jsonl'), 'utf8').includes('"final"'));
      } finally {
        await session.close();
      }
    });
  });

  describe('a sweep over a built-in kind runs that kind', () => {
    before(() => {
      // examples/dpo-arithmetic as written, on the random model with a small batch (the example's arith-gpt is for the demo)
      const pairs = fs.readFileSync(path.join(EXAMPLES, 'dpo-arithmetic', 'pairs.jsonl'), 'utf8').split('\n').slice(0, 40).join('\n');
      fs.writeFileSync(path.join(dir, 'pairs.jsonl'), `${pairs}\n`);
      const dpo = JSON.parse(fs.readFileSync(path.join(EXAMPLES, 'dpo-arithmetic', 'arith.dpo.json'), 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(path.join(dir, 'arith.dpo.json'), JSON.stringify({ ...dpo, model: RANDOM_MODEL, lora_rank: 4, batch_size: 8, dataset: { path: 'pairs.jsonl', validation: { fraction: 0.2 } } }));
      const chats = Array.from({ length: 24 }, (_, i) => JSON.stringify({ messages: [{ role: 'user', content: `${i}+1=` }, { role: 'assistant', content: String(i + 1) }] }));
      fs.writeFileSync(path.join(dir, 'chats.jsonl'), `${chats.join('\n')}\n`);
      fs.writeFileSync(path.join(dir, 'arith.sft.json'), JSON.stringify({ model: RANDOM_MODEL, renderer: 'chatml', lora_rank: 4, learning_rate: 0.004, batch_size: 8, max_steps: 2, eval_every: 1, save_every: 0, dataset: { path: 'chats.jsonl', validation: { fraction: 0.25 } } }));
    });

    it('DPO (the issue\'s sweep file as written): two DPO runs ranked by test/accuracy', async () => {
      const file = path.join(dir, 'dpo-lr.sweep.json');
      fs.writeFileSync(file, JSON.stringify({ base: 'arith.dpo.json', method: 'grid', parameters: { learning_rate: { values: [0.001, 0.002] }, max_steps: { value: 2 }, eval_every: { value: 2 } }, metric: { name: 'test/accuracy', goal: 'maximize' } }));
      const r = await runSweep({ sweepFile: file, runsDir: path.join(dir, 'runs-dpo'), connect, cacheDir: path.join(dir, 'cache') });
      assert.deepStrictEqual(r.outcomes.map((o) => [o.name, o.status, o.error]), [['learning_rate_0.001', 'completed', undefined], ['learning_rate_0.002', 'completed', undefined]]);
      for (const o of r.outcomes) {
        assert.strictEqual(JSON.parse(fs.readFileSync(path.join(o.dir, 'config.json'), 'utf8')).run_kind, 'dpo');
        assert.ok(readMetricsRowsSync(o.dir).every((row) => typeof row.dpo_loss === 'number'));
      }
      // ranked by the validation pairs' accuracy (measured at step 0 only, before any update: the two may tie)
      assert.ok(r.ranking.every((x) => (x.rank === 1 || x.rank === 2) && typeof x.best === 'number' && x.bestStep === 0), JSON.stringify(r.ranking));
      assert.strictEqual(r.manifest.metric.name, 'test/accuracy');
    });

    it('SFT: two SFT runs ranked by test/nll', async () => {
      const file = path.join(dir, 'sft-lr.sweep.json');
      fs.writeFileSync(file, JSON.stringify({ base: 'arith.sft.json', method: 'grid', parameters: { learning_rate: { values: [0.001, 0.004] } }, metric: { name: 'test/nll', goal: 'minimize' } }));
      const r = await runSweep({ sweepFile: file, runsDir: path.join(dir, 'runs-sft'), connect, cacheDir: path.join(dir, 'cache') });
      assert.deepStrictEqual(r.outcomes.map((o) => [o.status, o.error]), [['completed', undefined], ['completed', undefined]]);
      for (const o of r.outcomes) assert.strictEqual(JSON.parse(fs.readFileSync(path.join(o.dir, 'config.json'), 'utf8')).run_kind, 'sft');
      assert.deepStrictEqual(r.ranking.map((x) => x.rank).sort(), [1, 2]);
      assert.ok(r.ranking.every((x) => typeof x.best === 'number'));
    });

    it('a metric the kind does not log is refused before the first run, naming the kind\'s metrics', async () => {
      const file = path.join(dir, 'dpo-reward.sweep.json');
      fs.writeFileSync(file, JSON.stringify({ base: 'arith.dpo.json', method: 'grid', parameters: { learning_rate: { values: [0.001, 0.002] } }, metric: { name: 'env/all/reward/total', goal: 'maximize' } }));
      const runsDir = path.join(dir, 'runs-refused');
      await assert.rejects(runSweep({ sweepFile: file, runsDir, connect, cacheDir: path.join(dir, 'cache') }), (err: Error) => {
        assert.match(err.message, /dpo-reward\.sweep\.json: metric\.name: a DPO run does not log "env\/all\/reward\/total"; it logs .*dpo_loss, accuracy, margin.*test\/accuracy/);
        assert.strictEqual(err.message.split('\n').length, 1, 'said once, not once per point');
        return true;
      });
      assert.ok(!fs.existsSync(runsDir), 'no run started');
    });
  });
});
