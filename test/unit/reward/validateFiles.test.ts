// Which files validation treats as reward and examples files: the tinker.rewardFiles globs and the
// companion examples file names.
import * as assert from 'assert';
import * as path from 'path';
import { examplesFileFor, isExamplesFile, rewardFilesFor } from '../../../src/core/reward/files';
import { workerEnvironment } from '../../../src/core/reward/env';
import { globProblem, matchesGlob } from '../../../src/core/reward/globMatch';

describe('Reward files and examples files', () => {
  it('matches the tinker.rewardFiles globs against workspace-relative paths', () => {
    assert.ok(matchesGlob('rewards/a.py', 'rewards/*.py'));
    assert.ok(!matchesGlob('rewards/sub/a.py', 'rewards/*.py'), '* stays within a folder');
    assert.ok(matchesGlob('rewards/sub/a.py', 'rewards/**/*.py'));
    assert.ok(matchesGlob('a.py', '**/*.py'), '**/ matches no folder too');
    assert.ok(matchesGlob('x/reward.ts', '**/reward.{py,ts}'));
    assert.ok(!matchesGlob('x/reward.js', '**/reward.{py,ts}'));
    assert.ok(matchesGlob('r1.py', 'r?.py'));
    assert.ok(matchesGlob('r1.py', 'r[0-9].py'));
    assert.ok(!matchesGlob('rewardXpy', 'reward.py'), 'a dot is literal');
    assert.ok(matchesGlob('rewards/a.py', './rewards/a.py'));
  });

  it('matches like VS Code: dot folders and files included, [!…] negates a class, a leading ! is literal', () => {
    assert.ok(matchesGlob('.venv/reward.py', '**/*.py'), 'VS Code globs match dot folders');
    assert.ok(matchesGlob('rewards/.hidden.py', 'rewards/*.py'));
    assert.ok(matchesGlob('r1.py', 'r[!a-z].py'));
    assert.ok(!matchesGlob('rx.py', 'r[!a-z].py'));
    assert.ok(matchesGlob('a/b/c/d.py', 'a/**'));
    assert.ok(!matchesGlob('x.py', '!x.py'), 'no negation: "!x.py" does not match everything but x.py');
  });

  it('gives a clear message for a glob that is not a valid pattern instead of throwing', () => {
    for (const bad of ['[z-a].py', 'rewards/{a,b.py']) {
      assert.doesNotThrow(() => matchesGlob('z.py', bad));
      assert.strictEqual(matchesGlob('z.py', bad), false);
      assert.match(globProblem(bad) ?? '', new RegExp(`^"${bad.replace(/[[\]{}.]/g, '\\$&')}" is not a valid glob pattern \\(.+\\); it matches no file$`));
    }
    assert.strictEqual(globProblem('**/*.py'), undefined);
  });

  it('names the examples file after the reward file, and back', () => {
    assert.strictEqual(examplesFileFor(path.join('/w', 'reward.py')), path.join('/w', 'reward.examples.jsonl'));
    assert.strictEqual(examplesFileFor(path.join('/w', 'score.test.ts')), path.join('/w', 'score.test.examples.jsonl'));
    assert.ok(isExamplesFile('/w/reward.examples.jsonl'));
    assert.ok(!isExamplesFile('/w/train.jsonl'));
    assert.deepStrictEqual(rewardFilesFor(path.join('/w', 'reward.examples.jsonl')), ['.py', '.js', '.mjs', '.cjs', '.ts'].map((e) => path.join('/w', `reward${e}`)));
  });
});

describe('reward worker environment', () => {
  const source = { PATH: '/bin', Path: 'C:\\bin', SystemRoot: 'C:\\Windows', HOME: '/h', LC_ALL: 'C', PYTHONPATH: '/p', PYTHON_KEYRING_TOKEN: 't', AWS_SECRET_ACCESS_KEY: 's', GITHUB_TOKEN: 'g', RANDOM_VAR: 'r', MYAPP_MODE: 'm', TINKER_API_KEY: 'k' };
  it('passes the built-in allowlist and what the user lists; never the Tinker key or credentials not listed', () => {
    assert.deepStrictEqual(Object.keys(workerEnvironment({}, source, { platform: 'linux' })).sort(), ['HOME', 'LC_ALL', 'PATH', 'PYTHONPATH']);
    assert.deepStrictEqual(Object.keys(workerEnvironment({ X: '1' }, source, { platform: 'linux', allow: ['MYAPP_*', 'GITHUB_TOKEN', 'TINKER_API_KEY'] })).sort(), ['GITHUB_TOKEN', 'HOME', 'LC_ALL', 'MYAPP_MODE', 'PATH', 'PYTHONPATH', 'X']);
  });
  it('on Windows matches names case-insensitively and passes what Windows programs need (SYSTEMROOT)', () => {
    assert.deepStrictEqual(Object.keys(workerEnvironment({}, source, { platform: 'win32' })).sort(), ['HOME', 'LC_ALL', 'PATH', 'PYTHONPATH', 'Path', 'SystemRoot']);
  });
});
