// The CLI outside a checkout: `npm pack` makes a package whose `tinker-studio` command, installed with
// `npm install -g <tarball>` into a fresh prefix, runs a GRPO run on its embedded engine from a folder
// that has nothing of the repository. (The package has no run-time dependencies, so the install needs
// no registry: --offline proves it.)
import * as assert from 'assert';
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

const ROOT = path.resolve(__dirname, '../../../..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

describe('the CLI package (npm pack → npm install -g)', function () {
  this.timeout(300_000);
  let tmp: string;
  before(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-cli-pkg-'))));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('installs a tinker-studio command that trains outside the repository', () => {
    // the dist/ of the build this test run made (test-all builds first); no prepack rebuild under the tests
    const packed = execFileSync(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], { cwd: ROOT, encoding: 'utf8' });
    const [info] = JSON.parse(packed) as Array<{ filename: string; files: Array<{ path: string }> }>;
    assert.ok(info);
    assert.deepStrictEqual(info.files.map((f) => f.path).filter((p) => p.startsWith('dist/')).sort(), ['dist/arith-gpt.tsw', 'dist/cli.js', 'dist/engineWorker.js', 'dist/grpo-spec.schema.json']);
    const prefix = path.join(tmp, 'prefix');
    execFileSync(npm, ['install', '-g', '--offline', '--no-audit', '--no-fund', '--prefix', prefix, path.join(tmp, info.filename)], { cwd: tmp, encoding: 'utf8' });
    const bin = path.join(prefix, process.platform === 'win32' ? 'tinker-studio.cmd' : 'bin/tinker-studio');
    assert.ok(fs.existsSync(bin), `${bin} is installed`);

    const work = path.join(tmp, 'work');
    fs.mkdirSync(work);
    for (const f of ['reward.py', 'train.jsonl']) fs.copyFileSync(path.join(ROOT, 'examples/arithmetic', f), path.join(work, f));
    const spec = { model: 'tinker-studio/arith-gpt', renderer: 'chatml', lora_rank: 4, groups_per_batch: 2, group_size: 2, max_tokens: 4, iterations: 2, eval_every: 0, save_every: 0, dataset: { path: 'train.jsonl', prompt_field: 'question', ground_truth_field: 'answer' }, reward: { file: 'reward.py' } };
    fs.writeFileSync(path.join(work, 'tiny.grpo.json'), JSON.stringify(spec));
    const r = spawnSync(bin, ['grpo', 'tiny.grpo.json', '--backend', 'local', '--cache-dir', path.join(tmp, 'cache')], { cwd: work, encoding: 'utf8', env: { ...process.env, TINKER_API_KEY: '' } });
    assert.strictEqual(r.status, 0, `exit ${r.status}\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /run completed: .*tiny-\d{8}-\d{6} \(2 iterations this time\)/);
    const runs = fs.readdirSync(path.join(work, 'runs'));
    assert.strictEqual(runs.length, 1);
    assert.ok(fs.existsSync(path.join(work, 'runs', runs[0]!, 'metrics.jsonl')));
  });
});
