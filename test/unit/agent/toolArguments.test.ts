// Every agent tool checks its arguments strictly, in the one place the tools are declared
// (src/core/agent/tools.ts): an argument a tool does not take is an error naming it and listing the
// accepted ones, a bad value names the argument and what it must be — and nothing runs. The MCP
// surface serves the same schema (its JSON says additionalProperties: false) and answers through
// run() with the same messages (mcp.test.ts).
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { z } from 'zod';
import { AGENT_TOOLS } from '../../../src/core/agent/tools';
import { TrainingSession } from '../../../src/core/agent/session';

const EXAMPLE = path.resolve(__dirname, '../../../../examples/arithmetic');
const tool = (name: string) => AGENT_TOOLS.find((t) => t.name === name)!;

describe('agent tool arguments are checked strictly', () => {
  let dir: string;
  let session: TrainingSession;
  let connects = 0;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-toolargs-'));
    for (const f of ['holdout.jsonl', 'reward.py', 'holdout.eval.json']) fs.copyFileSync(path.join(EXAMPLE, f), path.join(dir, f));
    session = new TrainingSession({
      runsDir: path.join(dir, 'runs'),
      cacheDir: path.join(dir, 'cache'),
      baseDir: dir,
      connect: () => {
        connects++;
        throw new Error('no tool may connect with arguments it refuses');
      },
      idleMs: 0,
    });
  });
  after(async () => {
    await session.close('test over');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('every tool refuses an unknown argument, naming it and listing the accepted ones', async () => {
    for (const t of AGENT_TOOLS) {
      const accepted = Object.keys(t.input.shape);
      const err = await t.run(session, { bogus: 1 }).then(
        () => assert.fail(`${t.name} ran with an unknown argument`),
        (e: unknown) => e as Error,
      );
      assert.match(err.message, new RegExp(`^${t.name}: unknown argument "bogus"`), `${t.name}: ${err.message}`);
      assert.match(err.message, accepted.length ? new RegExp(`it accepts ${accepted.join(', ')}(;|$)`) : /it takes no arguments$/, `${t.name}: ${err.message}`);
    }
    assert.strictEqual(connects, 0);
  });

  it('the schemas both surfaces serve say so: additionalProperties false', () => {
    for (const t of AGENT_TOOLS) {
      const schema = z.toJSONSchema(t.input, { target: 'draft-07', io: 'input' }) as { additionalProperties?: unknown };
      assert.strictEqual(schema.additionalProperties, false, t.name);
    }
  });

  it('evaluate with "limit": -3 or "bogus": 1 starts nothing, and says why', async () => {
    const limit = tool('evaluate').run(session, { spec_file: 'holdout.eval.json', limit: -3 });
    await assert.rejects(limit, /^Error: evaluate: unknown argument "limit"; it accepts spec_file, targets, benchmark, dataset, grader, n, max_problems, max_tokens, temperature, backend$/);
    await assert.rejects(tool('evaluate').run(session, { spec_file: 'holdout.eval.json', bogus: 1 }), /unknown argument "bogus"/);
    await assert.rejects(tool('evaluate').run(session, { spec_file: 'holdout.eval.json', max_problem: 3 }), /unknown argument "max_problem" \(did you mean "max_problems"\?\)/);
    assert.ok(!fs.existsSync(path.join(dir, 'evals')), 'no results folder was made');
    assert.strictEqual(connects, 0);
  });

  it('eval_status with a name that is no eval, no results folder and no spec is an error naming it', async () => {
    await assert.rejects(tool('eval_status').run(session, { results: 'holdot' }), /^Error: eval_status: no eval "holdot": no results folder at .*holdot, and no eval of this session by that name; give the folder evaluate returned/);
    await assert.rejects(tool('eval_status').run(session, { results: 'missing.eval.json' }), /no eval "missing\.eval\.json"/);
  });

  it('a bad value names the argument, the rule and the value given', async () => {
    const inline = { targets: ['tinker-studio/arith-gpt'], dataset: 'holdout.jsonl', grader: 'reward.py' };
    await assert.rejects(tool('evaluate').run(session, { ...inline, max_problems: -3 }), /^Error: evaluate: max_problems: must be at least 1 \(got -3\)$/);
    await assert.rejects(tool('evaluate').run(session, { ...inline, n: 2.5 }), /evaluate: n: must be a whole number/);
    await assert.rejects(tool('train_grpo_step').run(session, { num_iterations: 0 }), /^Error: train_grpo_step: num_iterations: must be at least 1 \(got 0\)$/);
    await assert.rejects(tool('sample').run(session, { prompts: [{ prompt: 'x' }], temperature: 5 }), /^Error: sample: temperature: must be at most 2 \(got 5\)$/);
    await assert.rejects(tool('eval_status').run(session, {}), /^Error: eval_status: results: is required$/);
    await assert.rejects(tool('train_grpo_step').run(session, { num_iterations: 'two' }), /^Error: train_grpo_step: num_iterations: must be a number, not "two"$/);
    assert.ok(!fs.existsSync(path.join(dir, 'evals')));
    assert.strictEqual(connects, 0);
  });
});
