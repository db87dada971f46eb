// *.sft.json specs: defaults, errors naming file and field, paths resolved against the spec file, and
// the JSON schema the build writes and the manifest contributes for editors.
import * as assert from 'assert';
import Ajv from 'ajv';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { RunSpecError } from '../../../src/core/spec/text';
import { parseSftSpecFile, parseSftSpecText, sftSpecJsonSchema } from '../../../src/core/sft/spec';

const root = path.resolve(__dirname, '../../../..');
const problems = (f: () => unknown): string[] => {
  try {
    f();
  } catch (e) {
    if (e instanceof RunSpecError) return e.problems;
    throw e;
  }
  assert.fail('expected a RunSpecError');
};

describe('SFT spec', () => {
  it('fills the defaults of the cookbook supervised config', () => {
    const s = parseSftSpecText(JSON.stringify({ model: 'm', dataset: { path: 'c.jsonl' } }), 'a.sft.json');
    assert.strictEqual(s.lora_rank, 32);
    assert.strictEqual(s.lr_schedule, 'linear');
    assert.strictEqual(s.train_on_what, 'last_assistant_message');
    assert.strictEqual(s.eval_every, 10);
    assert.strictEqual(s.save_every, 20);
    assert.strictEqual(s.dataset.messages_field, 'messages');
    assert.strictEqual(s.learning_rate, undefined, 'get_lr decides at run time');
  });

  it('names file and field for every mistake', () => {
    assert.deepStrictEqual(problems(() => parseSftSpecText(JSON.stringify({ model: 'm', dataset: { path: 'c.jsonl', validation: { fraction: 0.9 } }, lr_schedule: 'exp' }), 'a.sft.json')), [
      'a.sft.json: dataset.validation.fraction: must be at most 0.5',
      'a.sft.json: lr_schedule: must be one of "linear", "cosine", "constant" (got "exp")',
    ]);
    assert.deepStrictEqual(problems(() => parseSftSpecText(JSON.stringify({ model: 'm', dataset: { path: 'c.jsonl' }, train_on: 'x' }), 'a.sft.json')), [
      'a.sft.json: train_on: unknown field',
    ]);
    assert.deepStrictEqual(problems(() => parseSftSpecText('{"model": "m",}', 'a.sft.json')), ["a.sft.json:1:15: invalid JSON: a trailing comma before '}'"]);
  });

  it('resolves paths against the spec file and reports a missing dataset file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-sft-spec-'));
    try {
      fs.writeFileSync(path.join(dir, 'c.jsonl'), '');
      fs.writeFileSync(path.join(dir, 'ok.sft.json'), JSON.stringify({ model: 'm', dataset: { path: 'c.jsonl' } }));
      const loaded = await parseSftSpecFile(path.join(dir, 'ok.sft.json'));
      assert.strictEqual(loaded.spec.name, 'ok');
      assert.strictEqual(loaded.spec.dataset.path, path.join(dir, 'c.jsonl'));
      fs.writeFileSync(path.join(dir, 'bad.sft.json'), JSON.stringify({ model: 'm', dataset: { path: 'c.jsonl', validation: { path: 'v.jsonl' } } }));
      await assert.rejects(parseSftSpecFile(path.join(dir, 'bad.sft.json')), /bad\.sft\.json: dataset\.validation\.path: file "v\.jsonl" not found/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the JSON schema accepts the shipped example, rejects what zod rejects, and is what the build writes and the manifest contributes', () => {
    const schema = sftSpecJsonSchema();
    const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
    const example = JSON.parse(fs.readFileSync(path.join(root, 'examples/sft-arithmetic/arith.sft.json'), 'utf8')) as Record<string, unknown>;
    assert.ok(validate(example), JSON.stringify(validate.errors));
    for (const bad of [{ ...example, dataset: { path: 'a', hf: { dataset: 'x/y' } } }, { ...example, batch_sise: 3 }, { ...example, train_on_what: 'all_tokens' }])
      assert.strictEqual(validate(bad), false, JSON.stringify(bad));
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    const entry = (pkg.contributes.jsonValidation as Array<{ fileMatch: string; url: string }>).find((e) => e.fileMatch === '*.sft.json');
    assert.strictEqual(entry?.url, './dist/sft-spec.schema.json');
    const script = `import { build } from ${JSON.stringify(path.join(root, 'scripts/build-spec-schema.mjs'))};
      const assets = await build(${JSON.stringify(root)});
      const a = assets.find((x) => x.name === 'sft-spec.schema.json');
      process.stdout.write(JSON.stringify(JSON.parse(Buffer.from(a.bytes).toString('utf8'))));`;
    assert.deepStrictEqual(JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })), schema);
  });
});
