// The agent's run_suite / suite_status tools on the embedded engine: a small suite answers with its
// table of layers; suite_status gives it again, and with compare_with the two checkpoints side by side
// with the gate's verdicts.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { AGENT_TOOLS } from '../../../src/core/agent/tools';
import { TrainingSession } from '../../../src/core/agent/session';
import { ServiceClient } from '../../../src/core/tinker/client';
import type { ComputeBackend } from '../../../src/engine/contract';
import { createComputeBackend } from '../../../src/engine/model';
import { startEngineServer, type EngineServer } from '../../../src/engine/server';

const EXAMPLE = path.resolve(__dirname, '../../../../examples/arithmetic');
const tool = (name: string) => AGENT_TOOLS.find((t) => t.name === name)!;

describe('agent suite tools', function () {
  this.timeout(120_000);
  let dir: string;
  let backend: ComputeBackend;
  let server: EngineServer;
  let session: TrainingSession;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-suitetools-'));
    for (const f of ['holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(EXAMPLE, f), path.join(dir, f));
    const evalSpec = { dataset: { path: 'holdout.jsonl', max_problems: 4 }, grader: { file: 'reward.py' }, n: 1, max_tokens: 6, seed: 1, renderer: 'chatml', targets: ['tinker-studio/arith-gpt'] };
    fs.writeFileSync(path.join(dir, 'small.suite.json'), JSON.stringify({ entries: [{ name: 'holdout', eval: evalSpec, layer: 'product', gate: { non_inferiority: 0.5, min: 2 } }] }));
    backend = await createComputeBackend({});
    server = await startEngineServer({ dataDir: path.join(dir, 'engine-data'), backend, longPollMs: 2000 });
    session = new TrainingSession({ runsDir: path.join(dir, 'runs'), cacheDir: path.join(dir, 'cache'), baseDir: dir, connect: () => ServiceClient.connect({ baseUrl: server.url, clientVersion: 'test' }), idleMs: 0 });
  });
  after(async () => {
    await session?.close('test over');
    await server?.close();
    await backend?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('run_suite returns the table; suite_status gives it again and compares two checkpoints through the gate', async () => {
    const r = await tool('run_suite').run(session, { suite_file: 'small.suite.json', checkpoint: 'tinker-studio/arith-gpt' });
    assert.match(r.text, /^suite small \(version [0-9a-f]{12}\) on tinker-studio\/arith-gpt\n/);
    assert.match(r.text, /^product\s+holdout\s+pass@1\s+\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]\s+4$/m);
    const results = (r.value as { results: string }).results;
    assert.ok(fs.existsSync(path.join(results, 'result.json')));
    const st = await tool('suite_status').run(session, { suite_file: 'small.suite.json', checkpoint: 'tinker-studio/arith-gpt' });
    assert.ok(st.text.includes(r.text.split('\nresults:')[0]!), st.text);
    await assert.rejects(tool('suite_status').run(session, { suite_file: 'small.suite.json', checkpoint: 'tinker-studio/arith-gpt', compare_with: 'tinker-studio/arith-chat' }), /no result of suite small .* on tinker-studio\/arith-chat: call run_suite on it first/);
    await tool('run_suite').run(session, { suite_file: 'small.suite.json', checkpoint: 'tinker-studio/arith-chat' });
    const cmp = await tool('suite_status').run(session, { suite_file: 'small.suite.json', checkpoint: 'tinker-studio/arith-chat', compare_with: 'tinker-studio/arith-gpt' });
    assert.match(cmp.text, /B: tinker-studio\/arith-gpt \(as production\)/);
    // the floor of 2 on a pass@1 cannot pass
    assert.match(cmp.text, /^product\s+holdout\s.*non-inferiority δ 0\.5, ≥ 2\s+FAIL$/m);
    assert.match(cmp.text, /gate: fails\n {2}holdout: pass@1 .* < 2 \(floor\)/);
    await assert.rejects(tool('run_suite').run(session, { suite_file: 'small.suite.json', checkpoint: 'tinker-studio/arith-gpt', extra: 1 }), /run_suite/);
  });
});
