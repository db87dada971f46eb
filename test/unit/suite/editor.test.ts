// A suite file in the editor: its problems where they are written (core/suite/diagnostics.ts), the
// rules the contributed JSON schema cannot say, and that schema (core/suite/jsonSchema.ts) with an
// inline entry's eval described by the eval spec's own schema.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { suiteDiagnostics } from '../../../src/core/suite/diagnostics';
import { suiteJsonSchema } from '../../../src/core/suite/jsonSchema';

const root = path.resolve(__dirname, '../../../..');

describe('suite file in the editor', () => {
  let dir: string;
  const file = () => path.join(dir, 'arith.suite.json');
  const text = (v: unknown) => JSON.stringify(v, null, 2);
  const at = (t: string, offset: number) => t.slice(offset, offset + 40);

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-suite-editor-'));
    for (const f of ['holdout.jsonl', 'reward.py', 'holdout.eval.json']) fs.copyFileSync(path.join(root, 'examples/arithmetic', f), path.join(dir, f));
    const bad = JSON.parse(fs.readFileSync(path.join(dir, 'holdout.eval.json'), 'utf8'));
    delete bad.max_tokens;
    fs.writeFileSync(path.join(dir, 'broken.eval.json'), JSON.stringify(bad));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a valid suite (an eval file, an inline eval without targets) has no problem', async () => {
    const inline = { dataset: { path: 'holdout.jsonl' }, grader: { file: 'reward.py' }, max_tokens: 6 };
    const t = text({ entries: [{ eval: 'holdout.eval.json', layer: 'product', gate: { min: 0.1 } }, { name: 'inline', eval: inline, layer: 'benchmark', metric: 'reward' }] });
    assert.deepStrictEqual(await suiteDiagnostics(t, file()), []);
  });

  it('a syntax error at its place, then schema errors at their field', async () => {
    const syntax = await suiteDiagnostics('{"entries": [}', file());
    assert.strictEqual(syntax.length, 1);
    assert.strictEqual(syntax[0]!.line, 1);
    const t = text({ entries: [{ eval: 'holdout.eval.json', layer: 'production' }] });
    const d = await suiteDiagnostics(t, file());
    assert.strictEqual(d.length, 1);
    assert.match(d[0]!.message, /layer/);
    assert.strictEqual(d[0]!.rule, false, 'the JSON schema says it too');
  });

  it('an entry name given twice is underlined at the second entry', async () => {
    const t = text({ entries: [{ eval: 'holdout.eval.json', layer: 'product' }, { eval: 'holdout.eval.json', layer: 'benchmark' }] });
    const d = await suiteDiagnostics(t, file());
    assert.strictEqual(d.length, 1);
    assert.match(d[0]!.message, /the entry name "holdout" is used twice/);
    assert.ok(d[0]!.rule);
    assert.strictEqual(d[0]!.offset, t.lastIndexOf('"holdout.eval.json"'), `underlined at ${at(t, d[0]!.offset)}`);
  });

  it('an eval file that is missing or not a valid eval spec, and a metric the eval does not report', async () => {
    const t = text({
      entries: [
        { eval: 'nowhere.eval.json', layer: 'product' },
        { eval: 'broken.eval.json', layer: 'product' },
        { name: 'm', eval: 'holdout.eval.json', layer: 'product', metric: 'accuracy' },
        { name: 'n', eval: 'holdout.eval.json', layer: 'training', metric: 'nll' },
      ],
    });
    const d = await suiteDiagnostics(t, file());
    assert.deepStrictEqual(
      d.map((x) => [x.line, x.message.replace(/\(looked for .*\)/, '(looked for …)')]),
      [
        [4, 'file "nowhere.eval.json" not found (looked for …)'],
        [8, 'broken.eval.json: max_tokens: required: the most tokens sampled per completion'],
        [15, '"accuracy" is not a metric an eval reports: use "pass@k" (k up to the eval\'s n), "reward" or "nll"'],
        [21, 'metric "nll" needs an NLL eval ("nll": {"dataset": …})'],
      ],
    );
    assert.ok(d.every((x) => x.rule));
  });

  it('an inline eval: the rules across its fields at their place (grader and env both)', async () => {
    const inline = { dataset: { path: 'holdout.jsonl' }, grader: { file: 'reward.py' }, env: { file: 'arith.env.py' }, max_tokens: 6 };
    const t = text({ entries: [{ name: 'both', eval: inline, layer: 'product' }] });
    const d = await suiteDiagnostics(t, file());
    assert.strictEqual(d.length, 1);
    assert.match(d[0]!.message, /give "grader" or "env", not both/);
    assert.strictEqual(at(t, d[0]!.offset).startsWith('"env"'), true, at(t, d[0]!.offset));
  });

  it('the JSON schema: layers, the gate, and an eval as a file or an inline spec whose targets are optional', () => {
    const s = suiteJsonSchema() as { required: string[]; properties: { entries: { items: { required: string[]; properties: Record<string, Record<string, unknown>> } } } };
    const entry = s.properties.entries.items;
    assert.deepStrictEqual(entry.required.sort(), ['eval', 'layer']);
    assert.deepStrictEqual(entry.properties['layer']!['enum'], ['training', 'benchmark', 'product']);
    assert.deepStrictEqual(Object.keys(entry.properties['gate']!['properties'] as object), ['non_inferiority', 'min', 'max']);
    const [asFile, inline] = entry.properties['eval']!['anyOf'] as Array<{ type: string; required?: string[]; properties?: Record<string, unknown> }>;
    assert.strictEqual(asFile!.type, 'string');
    assert.strictEqual(inline!.type, 'object');
    // targets may be written (the eval spec's own) but the suite gives the checkpoint
    assert.ok(!inline!.required!.includes('targets') && 'targets' in inline!.properties!);
    assert.ok('dataset' in inline!.properties! && 'grader' in inline!.properties!);
  });
});
