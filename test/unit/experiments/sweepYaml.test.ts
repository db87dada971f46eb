// Sweep files in YAML (the `yaml` package) read as the JSON ones do, with errors naming the file, the
// line and the field; and the positioned diagnostics of sweep files (JSON and YAML): schema problems at
// their field, a bad point at the parameter value that makes it, syntax errors at their place.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseSweepText, readSweepFile, sweepName } from '../../../src/core/experiments/sweepFile';
import { sweepDiagnostics } from '../../../src/core/experiments/sweepDiagnostics';
import { expandSweep } from '../../../src/core/experiments/expand';
import { isSweepFile } from '../../../src/core/spec/kinds';
import type { SpecDiagnostic } from '../../../src/core/spec/diagnostics';

const arithDir = path.resolve(__dirname, '../../../../examples/arithmetic');

const TINY_YAML = `# the arithmetic example's tiny sweep, in YAML
base: arith.grpo.json
method: grid
parameters:
  learning_rate:
    values: [1e-3, 0.004]
  iterations: {value: 2}
  groups_per_batch:
    value: 8
metric:
  name: env/all/reward/total
  goal: maximize
`;

/** The text a diagnostic underlines. */
const under = (text: string, d: SpecDiagnostic) => text.slice(d.offset, d.offset + d.length);

describe('sweeps: YAML sweep files', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sweep-yaml-'));
    for (const f of fs.readdirSync(arithDir)) if (fs.statSync(path.join(arithDir, f)).isFile()) fs.copyFileSync(path.join(arithDir, f), path.join(dir, f));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('*.sweep.yaml and *.sweep.yml are sweep files, named without the extension', () => {
    assert.ok(isSweepFile('a/b/lr.sweep.yaml') && isSweepFile('LR.SWEEP.YML') && isSweepFile('x.sweep.json'));
    assert.ok(!isSweepFile('x.yaml') && !isSweepFile('sweep.json'));
    assert.strictEqual(sweepName('/w/lr.sweep.yaml', {}), 'lr');
    assert.strictEqual(sweepName('/w/lr.sweep.yml', {}), 'lr');
  });

  it('reads as the same sweep as its JSON twin (1e-3 is a number in YAML 1.2)', () => {
    const fromYaml = parseSweepText(TINY_YAML, 'tiny.sweep.yaml');
    const fromJson = parseSweepText(fs.readFileSync(path.join(arithDir, 'tiny.sweep.json'), 'utf8'), 'tiny.sweep.json');
    assert.deepStrictEqual(fromYaml, fromJson);
  });

  it('errors name the file, the line and column, and the field', () => {
    const text = TINY_YAML.replace('goal: maximize', 'goal: up').replace('  iterations: {value: 2}', '  iterations: {value: 2}\n  lr: {valeus: [1]}');
    assert.throws(
      () => parseSweepText(text, 'bad.sweep.yaml'),
      (e: Error) => /^bad\.sweep\.yaml:13:3: metric\.goal: must be one of "maximize", "minimize" \(got "up"\)$/m.test(e.message) && /^bad\.sweep\.yaml:8:3: parameters\.lr/m.test(e.message),
    );
    assert.throws(() => parseSweepText('base: a.grpo.json\nmethod: [grid\n', 'syn.sweep.yml'), (e: Error) => /^syn\.sweep\.yml:\d+:\d+: invalid YAML: /.test(e.message));
    assert.throws(() => parseSweepText('base: a\nbase: b\n', 'dup.sweep.yaml'), (e: Error) => /^dup\.sweep\.yaml:2:1: invalid YAML: .*unique/.test(e.message));
    assert.throws(() => parseSweepText('  \n', 'empty.sweep.yaml'), (e: Error) => e.message === 'empty.sweep.yaml: the file is empty (expected a YAML mapping)');
  });

  it('JSON sweep errors carry the line and column too', () => {
    assert.throws(() => parseSweepText('{\n  "base": "a.grpo.json",\n  "method": "grid",\n  "parameters": {},\n  "metric": {"name": "m", "goal": "up"}\n}', 'z.sweep.json'), (e: Error) => /^z\.sweep\.json:5:27: metric\.goal/.test(e.message));
  });

  it('readSweepFile reads YAML by its name, and the expansion validates every point', async () => {
    const file = path.join(dir, 'tiny.sweep.yaml');
    fs.writeFileSync(file, TINY_YAML);
    const s = readSweepFile(file);
    const ex = await expandSweep(file, s);
    assert.deepStrictEqual(ex.points.map((p) => p.name), ['learning_rate_0.001', 'learning_rate_0.004']);
  });

  describe('positioned diagnostics', () => {
    it('YAML: a schema problem is underlined at its field (the key written)', async () => {
      const text = TINY_YAML.replace('goal: maximize', 'goal: up').replace('method: grid', 'method: grid\nrun_cap: 0');
      const file = path.join(dir, 'd1.sweep.yaml');
      const ds = await sweepDiagnostics(text, file);
      const goal = ds.find((d) => d.message.startsWith('metric.goal'))!;
      assert.deepStrictEqual([goal.line, goal.column, under(text, goal)], [13, 3, 'goal']);
      const cap = ds.find((d) => d.message.startsWith('run_cap'))!;
      assert.deepStrictEqual([cap.line, cap.column, under(text, cap)], [4, 1, 'run_cap']);
    });

    it('a bad point is underlined at the value that makes it, naming the point, in YAML and in JSON', async () => {
      const yaml = TINY_YAML.replace('values: [1e-3, 0.004]', 'values: [1e-3, 0.004]\n  group_size:\n    values: [4, -2]');
      const ds = await sweepDiagnostics(yaml, path.join(dir, 'd2.sweep.yaml'));
      assert.strictEqual(ds.length, 1, JSON.stringify(ds));
      const d = ds[0]!;
      assert.strictEqual(under(yaml, d), '-2');
      assert.deepStrictEqual([d.line, d.column], [8, 17]);
      assert.match(d.message, /^points learning_rate_0\.001\.group_size_-2, learning_rate_0\.004\.group_size_-2: arith\.grpo\.json: group_size: must be at least 2/);
      assert.strictEqual(d.rule, true, 'the JSON schema cannot say this: the editor shows it for JSON sweeps too');

      const json = '{\n  "base": "arith.grpo.json",\n  "method": "grid",\n  "parameters": {\n    "group_size": {"values": [4, -2]}\n  },\n  "metric": {"name": "m", "goal": "maximize"}\n}\n';
      const [j] = await sweepDiagnostics(json, path.join(dir, 'd2.sweep.json'));
      assert.strictEqual(under(json, j!), '-2');
      assert.deepStrictEqual([j!.line, j!.column], [5, 34]);
    });

    it('a base that is missing or not a run spec is underlined at base', async () => {
      const text = TINY_YAML.replace('base: arith.grpo.json', 'base: nope.grpo.json');
      const [d] = await sweepDiagnostics(text, path.join(dir, 'd3.sweep.yaml'));
      assert.strictEqual(under(text, d!), 'nope.grpo.json');
      assert.match(d!.message, /cannot read the spec file/);
      const text2 = TINY_YAML.replace('base: arith.grpo.json', 'base: train.jsonl');
      const [d2] = await sweepDiagnostics(text2, path.join(dir, 'd3.sweep.yaml'));
      assert.match(d2!.message, /^base: "train\.jsonl" is not a run spec file/);
    });

    it('a syntax error is placed where it is', async () => {
      const text = 'base: arith.grpo.json\nmethod: grid\nparameters: {a: [1, 2}\n';
      const ds = await sweepDiagnostics(text, path.join(dir, 'd4.sweep.yaml'));
      assert.strictEqual(ds.length, 1);
      assert.match(ds[0]!.message, /^invalid YAML: /);
      assert.strictEqual(ds[0]!.line, 3);
      const json = '{"base": "arith.grpo.json",\n "method": }';
      const [j] = await sweepDiagnostics(json, path.join(dir, 'd4.sweep.json'));
      assert.deepStrictEqual([j!.line, j!.column, j!.message], [2, 12, "invalid JSON: expected a value, found '}'"]);
    });

    it('a valid sweep has no problems (the arithmetic example, as written)', async () => {
      assert.deepStrictEqual(await sweepDiagnostics(TINY_YAML, path.join(dir, 'ok.sweep.yaml')), []);
      for (const f of ['tiny.sweep.json', 'lr.sweep.json']) assert.deepStrictEqual(await sweepDiagnostics(fs.readFileSync(path.join(arithDir, f), 'utf8'), path.join(arithDir, f)), [], f);
    });
  });
});
