// Workspace Trust and GRPO runs: a run executes the reward function, so in an untrusted workspace
// Start GRPO Run starts nothing — no run directory, no registered run, no reward code executed. The
// test host's profile disables Workspace Trust, so the runner gets a stand-in of an untrusted
// workspace's trust state.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { RunRunner } from '../../../src/vscode/runs/runRunner';
import { writeTinySpec } from './grpoFixtures';
import { activateExtension } from '../helpers';

suite('GRPO runs in an untrusted workspace', function () {
  this.timeout(60_000);

  test('Start GRPO Run executes nothing and registers no run', async () => {
    const api = await activateExtension();
    const specFile = writeTinySpec({ name: 'untrusted' });
    // if the reward module were ever imported, it would leave this marker behind
    const marker = path.join(path.dirname(specFile), 'executed.txt');
    fs.appendFileSync(path.join(path.dirname(specFile), 'reward.py'), `\nopen(${JSON.stringify(marker)}, "w").close()\n`);
    const before = fs.existsSync(api.runs.runsFolder) ? fs.readdirSync(api.runs.runsFolder) : [];
    const untrusted = new RunRunner({ ...api.runner.s, trust: { isTrusted: false } });

    const result = await untrusted.run({ specFile });

    assert.strictEqual(result, undefined, 'no run result: the run was not started');
    assert.deepStrictEqual(api.registry.active(), [], 'no run registered');
    const after = fs.existsSync(api.runs.runsFolder) ? fs.readdirSync(api.runs.runsFolder) : [];
    assert.deepStrictEqual(after, before, 'no run directory created');
    assert.strictEqual(fs.existsSync(marker), false, 'the reward file was never executed');
  });
});
