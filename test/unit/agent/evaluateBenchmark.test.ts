// The agent's evaluate tool on a public benchmark (targets + benchmark): the spec it writes, and the
// eval run on the embedded engine with GSM8K's rows from the datasets-server stand-in.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { AGENT_TOOLS } from '../../../src/core/agent/tools';
import { TrainingSession } from '../../../src/core/agent/session';
import { readEvalResults } from '../../../src/core/evals/results';
import { startCountingEngine, type CountingEngine } from '../evals/engineFixture';
import { DatasetsServerStandIn } from '../evals/hubStandIn';

const tool = (name: string) => AGENT_TOOLS.find((t) => t.name === name)!;

describe('agent tool evaluate on a benchmark', function () {
  this.timeout(120_000);
  let engine: CountingEngine;
  let hub: DatasetsServerStandIn;
  let session: TrainingSession;
  const before0 = process.env.TINKER_DATASETS_SERVER;

  before(async () => {
    engine = await startCountingEngine('tinker-agent-bench-');
    hub = await new DatasetsServerStandIn().start();
    process.env.TINKER_DATASETS_SERVER = hub.url;
    session = new TrainingSession({ runsDir: path.join(engine.dir, 'runs'), cacheDir: engine.cacheDir(), baseDir: engine.dir, connect: () => engine.connect(), idleMs: 0 });
  });
  after(async () => {
    if (before0 === undefined) delete process.env.TINKER_DATASETS_SERVER;
    else process.env.TINKER_DATASETS_SERVER = before0;
    await session?.close('test over');
    await hub?.stop();
    await engine?.close();
  });

  it('targets + benchmark: a seeded subset of GSM8K graded by its grader, the table at once', async () => {
    const r = await tool('evaluate').run(session, { targets: ['tinker-studio/arith-chat'], benchmark: 'gsm8k', max_problems: 5, max_tokens: 16 });
    const results = (r.value as { results: string }).results;
    assert.match(path.basename(results), /^agent-gsm8k-/);
    const spec = JSON.parse(fs.readFileSync(path.join(results, 'spec.json'), 'utf8'));
    assert.deepStrictEqual({ ...spec, name: undefined }, { name: undefined, benchmark: 'gsm8k', max_problems: 5, seed: 0, backend: 'local', targets: ['tinker-studio/arith-chat'], max_tokens: 16 });
    assert.match(r.text, /tinker-studio\/arith-chat \(baseline\)\s+5 /);
    const s = readEvalResults(results).summary;
    assert.strictEqual(s.targets[0]!.problems, 5);
    assert.ok(hub.requests.length > 0, 'the rows came from the stand-in');
  });

  it('refuses a benchmark with a dataset or a grader', async () => {
    await assert.rejects(tool('evaluate').run(session, { targets: ['m'], benchmark: 'gsm8k', dataset: 'h.jsonl' }), /give a benchmark, or dataset \+ grader, not both/);
  });
});
