// `tinker-studio registry` end to end: the built CLI (dist/cli.js) on the embedded engine trains two
// tiny GRPO runs, registers their final checkpoints, runs a small suite on them through
// `registry suite` / `promote --run-suite`, promotes the first, is refused for the collapsed second
// (the paired numbers in the message, exit 1, nothing changed), promotes it anyway with a reason,
// and list/show/export-md/retire read and write the same files. Plus the arguments' errors.
import * as assert from 'assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from '../../../src/cli/args';
import { readRegistry } from '../../../src/core/models/store';

const ROOT = path.resolve(__dirname, '../../../..');
const CLI = path.join(ROOT, 'dist/cli.js');
const EXAMPLE = path.join(ROOT, 'examples/arithmetic');

describe('tinker-studio registry (CLI)', function () {
  this.timeout(600_000);
  let dir: string;
  let env: NodeJS.ProcessEnv;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-registrycli-'));
    env = { ...process.env, TINKER_API_KEY: '', TINKER_STUDIO_CACHE_DIR: path.join(dir, 'cache'), TINKER_STUDIO_REGISTRY: '' };
    for (const f of ['train.jsonl', 'holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(EXAMPLE, f), path.join(dir, f));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: dir, env, encoding: 'utf8' });

  it('parses the actions and says what to type', () => {
    assert.deepStrictEqual(parseArgs(['registry', 'promote', 'arith@v2', '--anyway', 'hotfix', '--run-suite']), { command: 'registry', action: 'promote', target: 'arith@v2', anyway: 'hotfix', runSuite: true });
    assert.deepStrictEqual(parseArgs(['registry', 'register', 'arith', 'runs/x', '--checkpoint', '000020']), { command: 'registry', action: 'register', target: 'arith', runDir: 'runs/x', checkpoint: '000020' });
    assert.throws(() => parseArgs(['registry', 'promote', 'arith@v2', '--anyway', ' ']), /--anyway needs a written reason/);
    assert.throws(() => parseArgs(['registry', 'register', 'arith']), /needs a run folder or --sampler-path/);
    assert.throws(() => parseArgs(['registry', 'register', 'arith', '--sampler-path', 'tinker://a/sampler_weights/b']), /needs --base-model/);
    assert.throws(() => parseArgs(['registry', 'retire', 'arith@v1', '--anyway', 'x']), /registry retire takes no --anyway/);
    assert.throws(() => parseArgs(['registry', 'promote', 'a@v1', '--to', 'retired']), /--to must be staging or production/);
    assert.throws(() => parseArgs(['registry', 'go']), /registry needs an action: list, show, register, promote, retire, export-md, gate, suite \(got "go"\)/);
  });

  it('registers two trained runs, gates the promotion on a suite run on the engine, refuses the collapsed one with the paired numbers, and promotes it anyway with a reason', async () => {
    const spec = (name: string, lr: number) => {
      const s = { name, backend: 'local', model: 'tinker-studio/arith-gpt', renderer: 'chatml', lora_rank: 4, learning_rate: lr, groups_per_batch: 8, group_size: 4, max_tokens: 6, iterations: 3, eval_every: 0, save_every: 0, seed: 0, sampling_seed: 1, dataset: { path: 'train.jsonl', prompt_field: 'question', ground_truth_field: 'answer' }, reward: { file: 'reward.py' } };
      fs.writeFileSync(path.join(dir, `${name}.grpo.json`), JSON.stringify(s));
      const r = cli(['grpo', `${name}.grpo.json`, '--runs-dir', 'runs']);
      assert.strictEqual(r.status, 0, r.stderr);
      return path.join('runs', fs.readdirSync(path.join(dir, 'runs')).find((d) => d.startsWith(`${name}-`))!);
    };
    const good = spec('good', 0.002);
    // a learning rate that wrecks the model in three updates
    const wrecked = spec('wrecked', 1);
    const evalSpec = { dataset: { path: 'holdout.jsonl', max_problems: 12, prompt_field: 'question', ground_truth_field: 'answer' }, grader: { file: 'reward.py' }, n: 2, max_tokens: 6, temperature: 1, seed: 0, renderer: 'chatml', targets: ['tinker-studio/arith-gpt'] };
    fs.writeFileSync(path.join(dir, 'holdout.eval.json'), JSON.stringify(evalSpec));
    fs.writeFileSync(path.join(dir, 'arith.suite.json'), JSON.stringify({ entries: [{ eval: 'holdout.eval.json', layer: 'product', gate: { non_inferiority: 0.02 } }] }));

    let r = cli(['registry', 'register', 'arith', good]);
    assert.strictEqual(r.status, 0, r.stderr);
    assert.match(r.stdout, /^registered arith@v1 \(candidate\): tinker:\/\/\S+\/sampler_weights\/final, recipe GRPO\n/);
    assert.strictEqual(cli(['registry', 'register', 'arith', wrecked]).status, 0);
    r = cli(['registry', 'promote', 'arith@v1']);
    assert.strictEqual(r.status, 1);
    assert.match(r.stderr, /names no gate suite/);
    assert.strictEqual(cli(['registry', 'gate', 'arith.suite.json']).status, 0);

    // the first production version: the suite runs on it (no production to pair with yet)
    r = cli(['registry', 'promote', 'arith@v1', '--run-suite']);
    assert.strictEqual(r.status, 0, r.stderr);
    assert.match(r.stdout, /^arith@v1 is in production\n/);
    assert.match(r.stdout, /holdout: no production model to compare with/);

    // the wrecked one: its suite result first, then the gate refuses with the paired numbers
    r = cli(['registry', 'suite', 'arith@v2']);
    assert.strictEqual(r.status, 0, r.stderr);
    assert.match(r.stdout, /^arith@v2 on suite arith version [0-9a-f]{12}:\n {2}holdout \(product\) pass@1 0 \[0, 0\] n=12\n/);
    r = cli(['registry', 'promote', 'arith@v2']);
    assert.strictEqual(r.status, 1, r.stdout);
    assert.match(r.stderr, /promotion of arith@v2 to production refused on suite arith version [0-9a-f]{12} against production arith@v1:\n {2}- holdout: pass@1 0 \[0, 0\] vs production [\d.]+ \[[\d.]+, [\d.]+\]; paired difference -[\d.]+ \[-[\d.]+, -?[\d.]+\] over 12 items \(higher is better\), lower bound -[\d.]+ < −0\.02\n/);
    {
      assert.deepStrictEqual((await readRegistry(path.join(dir, 'tinker-models.json'))).versions.map((v) => v.status), ['production', 'candidate'], 'a refusal changes nothing');
      r = cli(['registry', 'promote', 'arith@v2', '--anyway', 'demo of the override']);
      assert.strictEqual(r.status, 0, r.stderr);
      assert.match(r.stdout, /^arith@v2 is in production \(promoted anyway past the gate\); arith@v1 retired\nthe gate refused:\n {2}- holdout: pass@1 0/);
      const md = fs.readFileSync(path.join(dir, 'MODELS.md'), 'utf8');
      assert.match(md, /### arith@v2 — production/);
      assert.match(md, /\*\*promoted anyway\*\*; reason: demo of the override/);
      assert.match(md, /\| holdout \| product \| pass@1 \(higher is better\) \| 0 \[0, 0\] \| 12 \|/);
      assert.match(md, /\| 1 \| grpo \| `runs\/wrecked-[^`]+` \| 1 \| 3 \| iterations 3 \| base model \| `tinker:\/\/[^`]+\/weights\/final` \|/);
      assert.match(md, /\| `train\.jsonl` \| grpo dataset\.path \| 8971 \| `[0-9a-f]{64}` \|/);

      r = cli(['registry', 'list']);
      assert.strictEqual(r.status, 0, r.stderr);
      assert.match(r.stdout, /^arith@v2 +production +tinker:\/\/\S+ +holdout pass@1 0 \[0, 0\]\narith@v1 +retired +/);
      r = cli(['registry', 'show', 'arith@v1', '--json']);
      assert.deepStrictEqual(JSON.parse(r.stdout).history.map((h: { status: string }) => h.status), ['candidate', 'production', 'retired']);
      assert.strictEqual(cli(['registry', 'retire', 'arith@v2', '--reason', 'collapsed']).status, 0);
      r = cli(['registry', 'export-md', '--out', 'copy.md']);
      assert.strictEqual(r.status, 0, r.stderr);
      assert.strictEqual(fs.readFileSync(path.join(dir, 'copy.md'), 'utf8'), fs.readFileSync(path.join(dir, 'MODELS.md'), 'utf8'));
      assert.deepStrictEqual((await readRegistry(path.join(dir, 'tinker-models.json'))).versions.map((v) => v.status), ['retired', 'retired']);
    }
  });
});
