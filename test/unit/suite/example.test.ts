// examples/suite: the suite file as shipped (its entries, layers, metrics and gates, the defaults the
// README states), the entries that share their samples, and the README's commands; an entry naming an
// NLL eval file gets the NLL defaults (metric nll, lower is better) as an inline one does.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseEvalSpecFile } from '../../../src/core/evals/spec';
import { samplingKey } from '../../../src/core/suite/share';
import { DEFAULT_NON_INFERIORITY, loadSuite } from '../../../src/core/suite/store';

const DIR = path.resolve(__dirname, '../../../../examples/suite');

describe('examples/suite', () => {
  it('arith.suite.json: a training entry (the NLL of held-out chats) and product entries over the arithmetic holdout that share their samples', async () => {
    const suite = await loadSuite(path.join(DIR, 'arith.suite.json'));
    assert.strictEqual(suite.name, 'arith');
    // nll.eval.json and its chats come with the NLL eval (issue 47 §1); until then the entry has the sampling defaults
    assert.deepStrictEqual(
      suite.entries.map((e) => [e.name, e.layer, e.metric, e.goal, e.gate, e.evalFile && path.relative(DIR, e.evalFile)]),
      [
        ['heldout-nll', 'training', fs.existsSync(path.join(DIR, 'nll.eval.json')) ? 'nll' : 'pass@1', fs.existsSync(path.join(DIR, 'nll.eval.json')) ? 'minimize' : 'maximize', { non_inferiority: DEFAULT_NON_INFERIORITY }, 'nll.eval.json'],
        ['holdout', 'product', 'pass@1', 'maximize', { non_inferiority: 0.02 }, 'holdout.eval.json'],
        ['holdout-pass4', 'product', 'pass@4', 'maximize', { min: 0.5 }, 'holdout.eval.json'],
      ],
    );
    const holdout = (await parseEvalSpecFile(path.join(DIR, 'holdout.eval.json'))).spec;
    assert.strictEqual(holdout.dataset.path, path.resolve(DIR, '../arithmetic/holdout.jsonl'), 'the arithmetic example\'s holdout');
    assert.ok(samplingKey(holdout) !== undefined);
  });

  it('the README gives the commands and the defaults', () => {
    const readme = fs.readFileSync(path.join(DIR, 'README.md'), 'utf8');
    for (const c of [
      'npm run demo',
      'node dist/cli.js suite run examples/suite/arith.suite.json latest',
      'node dist/cli.js suite run examples/suite/arith.suite.json tinker-studio/arith-gpt',
      'node dist/cli.js suite compare examples/suite/arith.suite.json latest tinker-studio/arith-gpt',
      'node dist/cli.js suite show examples/suite/arith.suite.json latest',
    ])
      assert.ok(readme.includes(c), `the README gives \`${c}\``);
    assert.match(readme, /non_inferiority.{0,40}0\.02/);
    assert.match(readme, /"pass@1"/);
    assert.match(readme, /"nll"/);
  });

  it('an entry naming an NLL eval file defaults to metric nll, lower is better; a metric given is kept', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-suite-nll-'));
    try {
      fs.writeFileSync(path.join(dir, 'chats.eval.json'), JSON.stringify({ nll: { dataset: { path: 'chats.jsonl' } }, targets: ['tinker-studio/arith-gpt'] }));
      fs.writeFileSync(path.join(dir, 's.suite.json'), JSON.stringify({ entries: [{ eval: 'chats.eval.json', layer: 'training' }, { name: 'given', eval: 'chats.eval.json', layer: 'training', metric: 'reward' }, { name: 'gone', eval: 'missing.eval.json', layer: 'product' }] }));
      const s = await loadSuite(path.join(dir, 's.suite.json'));
      assert.deepStrictEqual(s.entries.map((e) => [e.name, e.metric, e.goal]), [['chats', 'nll', 'minimize'], ['given', 'reward', 'maximize'], ['gone', 'pass@1', 'maximize']]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
