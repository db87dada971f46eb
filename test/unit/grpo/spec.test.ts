// GRPO run-spec files: defaults, the message for each kind of mistake, path resolution, JSON syntax
// errors with their position, and the JSON schema the extension contributes for `*.grpo.json`.
import * as assert from 'assert';
import Ajv from 'ajv';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { GrpoSpecInput, grpoSpecJsonSchema, parseGrpoSpecFile, parseGrpoSpecText } from '../../../src/core/grpo/spec';
import { findJsonSyntaxError } from '../../../src/core/spec/jsonSyntax';
import { defaultRunName } from '../../../src/core/spec/kinds';
import { RunSpecError } from '../../../src/core/spec/text';
import { problemsOf } from './specProblems';

const root = path.resolve(__dirname, '../../../..');

/** The smallest valid spec. */
const minimal = (): GrpoSpecInput => ({
  model: 'tinker-studio/arith-gpt',
  max_tokens: 6,
  iterations: 3,
  dataset: { path: 'train.jsonl' },
  reward: { file: 'reward.py' },
});


describe('GRPO run spec', () => {
  describe('defaults', () => {
    it('fills every optional field the cookbook has a default for', () => {
      const spec = parseGrpoSpecText(JSON.stringify(minimal()), 'arith.grpo.json');
      assert.strictEqual(spec.backend, 'local');
      assert.strictEqual(spec.lora_rank, 32);
      assert.strictEqual(spec.groups_per_batch, 16);
      assert.strictEqual(spec.group_size, 8);
      assert.strictEqual(spec.temperature, 1);
      assert.strictEqual(spec.save_every, 20);
      assert.strictEqual(spec.eval_every, 20);
      assert.strictEqual(spec.seed, 0);
      assert.strictEqual(spec.loss_fn, 'importance_sampling');
      assert.strictEqual(spec.remove_constant_reward_groups, false);
      assert.strictEqual(spec.dataset!.prompt_field, 'question');
      assert.strictEqual(spec.dataset!.ground_truth_field, 'answer');
      assert.strictEqual(spec.dataset!.on_invalid_line, 'stop');
      assert.strictEqual(spec.reward!.timeout_ms, 10000);
    });

    it('leaves the learning rate, renderer and name to be chosen later', () => {
      const spec = parseGrpoSpecText(JSON.stringify(minimal()), 'arith.grpo.json');
      assert.strictEqual(spec.learning_rate, undefined);
      assert.strictEqual(spec.renderer, undefined);
      assert.strictEqual(spec.name, undefined);
      assert.strictEqual(spec.dataset!.holdout, undefined);
    });

    it('reads a Hugging Face source with the train split by default', () => {
      const spec = parseGrpoSpecText(JSON.stringify({ ...minimal(), dataset: { hf: { dataset: 'openai/gsm8k', config: 'main' } } }), 'g.grpo.json');
      assert.deepStrictEqual(spec.dataset!.hf, { dataset: 'openai/gsm8k', config: 'main', split: 'train' });
    });

    it('names a run after its file', () => {
      assert.strictEqual(defaultRunName('/x/arith.grpo.json'), 'arith');
      assert.strictEqual(defaultRunName('/x/My Run (2).grpo.json'), 'My-Run-2-');
      assert.strictEqual(defaultRunName('/x/.grpo.json'), 'run');
    });
  });

  describe('mistakes, each with the field and what is wrong', () => {
    const cases: Array<[string, (s: GrpoSpecInput & Record<string, unknown>) => unknown, string]> = [
      ['a missing required field', ({ max_tokens: _m, ...rest }) => rest, 'arith.grpo.json: max_tokens: is required'],
      ['a holdout fraction above 0.5', (s) => ({ ...s, dataset: { path: 't.jsonl', holdout: { fraction: 0.7 } } }), 'arith.grpo.json: dataset.holdout.fraction: must be at most 0.5'],
      ['a holdout with both a file and a fraction', (s) => ({ ...s, dataset: { path: 't.jsonl', holdout: { path: 'h.jsonl', fraction: 0.1 } } }), 'arith.grpo.json: dataset.holdout: give either "path" or "fraction", not both'],
      ['a holdout with neither', (s) => ({ ...s, dataset: { path: 't.jsonl', holdout: {} } }), 'arith.grpo.json: dataset.holdout: give "path" (a JSONL file) or "fraction" (0 to 0.5)'],
      ['a dataset with no source', (s) => ({ ...s, dataset: {} }), 'arith.grpo.json: dataset: give "path" (a JSONL file) or "hf" (a Hugging Face dataset)'],
      ['a dataset with two sources', (s) => ({ ...s, dataset: { path: 't.jsonl', hf: { dataset: 'a/b' } } }), 'arith.grpo.json: dataset: give either "path" or "hf", not both'],
      ['a holdout cap without a holdout', (s) => ({ ...s, dataset: { path: 't.jsonl', holdout_max: 10 } }), 'arith.grpo.json: dataset.holdout_max: there is no holdout to cap (add dataset.holdout)'],
      ['zero iterations', (s) => ({ ...s, iterations: 0 }), 'arith.grpo.json: iterations: must be at least 1'],
      ['a fractional LoRA rank', (s) => ({ ...s, lora_rank: 8.5 }), 'arith.grpo.json: lora_rank: must be a whole number, not 8.5'],
      ['a number given as text', (s) => ({ ...s, temperature: 'hot' }), 'arith.grpo.json: temperature: must be a number, not "hot"'],
      ['a group of one', (s) => ({ ...s, group_size: 1 }), 'arith.grpo.json: group_size: must be at least 2 (advantages are centred within a group, so one sample learns nothing); 1 is allowed with a teacher'],
      ['a zero learning rate', (s) => ({ ...s, learning_rate: 0 }), 'arith.grpo.json: learning_rate: must be greater than 0'],
      ['an unknown backend', (s) => ({ ...s, backend: 'gpu' }), 'arith.grpo.json: backend: must be one of "local", "cloud", "custom" (got "gpu")'],
      ['an unknown loss', (s) => ({ ...s, loss_fn: 'cispo' }), 'arith.grpo.json: loss_fn: must be one of "importance_sampling", "ppo" (got "cispo")'],
      ['a misspelt field', (s) => ({ ...s, lora_rnak: 8 }), 'arith.grpo.json: lora_rnak: unknown field (did you mean "lora_rank"?)'],
      ['a misspelt nested field', (s) => ({ ...s, dataset: { path: 't.jsonl', promt_field: 'q' } }), 'arith.grpo.json: dataset.promt_field: unknown field (did you mean "prompt_field"?)'],
      ['an unknown field far from any', (s) => ({ ...s, colour: 'red' }), 'arith.grpo.json: colour: unknown field'],
      ['an empty stop string', (s) => ({ ...s, stop: ['\n', ''] }), 'arith.grpo.json: stop[1]: must not be empty'],
      ['a reward file of another language', (s) => ({ ...s, reward: { file: 'reward.rb' } }), 'arith.grpo.json: reward.file: must be a .py, .js, .mjs, .cjs or .ts file'],
      ['a base_url without the custom backend', (s) => ({ ...s, base_url: 'http://127.0.0.1:8000' }), 'arith.grpo.json: base_url: only used with backend "custom" (backend is "local")'],
      ['a base_url that is no URL', (s) => ({ ...s, backend: 'custom', base_url: '127.0.0.1:8000' }), 'arith.grpo.json: base_url: must be an http:// or https:// URL, e.g. http://127.0.0.1:8000'],
      ['a checkpoint that is no tinker:// path', (s) => ({ ...s, load_checkpoint_path: '/tmp/weights' }), 'arith.grpo.json: load_checkpoint_path: must be a tinker:// path, e.g. tinker://<run id>/weights/000020'],
      ['a run name that cannot name a folder', (s) => ({ ...s, name: 'a/b' }), 'arith.grpo.json: name: must be letters, digits, ".", "_" or "-" (it names the run directory)'],
      ['loss parameters for importance sampling', (s) => ({ ...s, loss_fn_config: { clip_low_threshold: 0.8 } }), 'arith.grpo.json: loss_fn_config: only used with loss_fn "ppo"'],
      ['an unknown ppo parameter', (s) => ({ ...s, loss_fn: 'ppo', loss_fn_config: { clip: 0.2 } }), 'arith.grpo.json: loss_fn_config.clip: unknown ppo parameter (known: clip_low_threshold, clip_high_threshold)'],
      ['ppo bounds the wrong way round', (s) => ({ ...s, loss_fn: 'ppo', loss_fn_config: { clip_low_threshold: 1.2, clip_high_threshold: 0.8 } }), 'arith.grpo.json: loss_fn_config: clip_low_threshold must be below clip_high_threshold'],
      ['an invalid-line policy that does not exist', (s) => ({ ...s, dataset: { path: 't.jsonl', on_invalid_line: 'ignore' } }), 'arith.grpo.json: dataset.on_invalid_line: must be one of "skip", "stop" (got "ignore")'],
      ['a spec that is a list', () => [], 'arith.grpo.json: (top level): must be an object, not a list'],
    ];
    for (const [what, edit, message] of cases) {
      it(`${what}: "${message}"`, () => {
        assert.deepStrictEqual(problemsOf(edit(minimal())), [message]);
      });
    }

    it('reports every mistake at once, one line each', () => {
      const problems = problemsOf({ ...minimal(), iterations: 0, group_size: 1, dataset: { path: 't.jsonl', holdout: { fraction: 0.9 } } });
      assert.strictEqual(problems.length, 3);
      assert.ok(problems.every((p) => p.startsWith('arith.grpo.json: ')));
    });

    it('accepts ppo with both clip thresholds', () => {
      assert.deepStrictEqual(problemsOf({ ...minimal(), loss_fn: 'ppo', loss_fn_config: { clip_low_threshold: 0.8, clip_high_threshold: 1.2 } }), []);
    });
  });

  describe('JSON syntax errors', () => {
    const syntaxCases: Array<[string, string, string]> = [
      ['a doubled comma', '{\n  "model": "m",\n  "max_tokens": 6,,\n}\n', "arith.grpo.json:3:19: invalid JSON: expected a property name in double quotes, found ','"],
      ['a trailing comma', '{\n  "model": "m",\n}\n', "arith.grpo.json:3:1: invalid JSON: a trailing comma before '}'"],
      ['a missing value', '{"model": }', "arith.grpo.json:1:11: invalid JSON: expected a value, found '}'"],
      ['a file that stops early', '{\n  "model": "m"', "arith.grpo.json:2:15: invalid JSON: expected ',' or '}' after a property value, found the end of the file"],
      ['a string never closed', '{"model": "m}', 'arith.grpo.json:1:11: invalid JSON: a string that is never closed'],
      ['a comment', '{\n  // the model\n  "model": "m"\n}', "arith.grpo.json:2:3: invalid JSON: expected a property name in double quotes, found '/'"],
      ['text after the object', '{"model": "m"} x', "arith.grpo.json:1:16: invalid JSON: unexpected text after the JSON value, found 'x'"],
      ['single quotes', "{'model': 'm'}", "arith.grpo.json:1:2: invalid JSON: expected a property name in double quotes, found '''"],
    ];
    for (const [what, text, message] of syntaxCases) {
      it(`${what}: "${message}"`, () => {
        assert.throws(() => parseGrpoSpecText(text, 'arith.grpo.json'), { message });
      });
    }

    it('the scanner that locates syntax errors finds none in valid JSON', () => {
      const valid = [
        fs.readFileSync(path.join(root, 'examples/arithmetic/arith.grpo.json'), 'utf8'),
        '{"a": [1, -2.5e-3, 0, 1E+2, true, false, null, {}, []], "s": "q\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9 é"}',
        ' [ ] ',
        '"text"',
      ];
      for (const text of valid) {
        assert.doesNotThrow(() => JSON.parse(text), text);
        assert.strictEqual(findJsonSyntaxError(text), undefined, text);
      }
    });

    it('says so when the file is empty, and reads a file that starts with a BOM', () => {
      assert.throws(() => parseGrpoSpecText(' \n', 'a.grpo.json'), { message: 'a.grpo.json: the file is empty (expected a JSON object)' });
      assert.strictEqual(parseGrpoSpecText('\ufeff' + JSON.stringify(minimal()), 'a.grpo.json').model, 'tinker-studio/arith-gpt');
    });
  });

  describe('reading a spec file', () => {
    let dir: string;
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-spec-'));
      fs.mkdirSync(path.join(dir, 'data'));
      fs.writeFileSync(path.join(dir, 'data', 'train.jsonl'), '{"question": "q", "answer": 1}\n');
      fs.writeFileSync(path.join(dir, 'data', 'holdout.jsonl'), '{"question": "q", "answer": 1}\n');
      fs.writeFileSync(path.join(dir, 'reward.py'), 'def compute_reward(c, g):\n    return 0.0\n');
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    const write = (name: string, spec: unknown) => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, JSON.stringify(spec, null, 2));
      return file;
    };

    it("resolves the dataset, holdout and reward paths against the spec's folder and names the run after the file", async () => {
      const file = write('my-run.grpo.json', { ...minimal(), dataset: { path: 'data/train.jsonl', holdout: { path: './data/holdout.jsonl' } } });
      const loaded = await parseGrpoSpecFile(path.relative(process.cwd(), file));
      assert.strictEqual(loaded.file, file);
      assert.strictEqual(loaded.dir, dir);
      assert.strictEqual(loaded.spec.name, 'my-run');
      assert.strictEqual(loaded.spec.dataset!.path, path.join(dir, 'data', 'train.jsonl'));
      assert.strictEqual(loaded.spec.dataset!.holdout?.path, path.join(dir, 'data', 'holdout.jsonl'));
      assert.strictEqual(loaded.spec.reward!.file, path.join(dir, 'reward.py'));
    });

    it('keeps a name given in the spec and absolute paths as they are', async () => {
      const abs = path.join(dir, 'data', 'train.jsonl');
      const loaded = await parseGrpoSpecFile(write('x.grpo.json', { ...minimal(), name: 'chosen', dataset: { path: abs } }));
      assert.strictEqual(loaded.spec.name, 'chosen');
      assert.strictEqual(loaded.spec.dataset!.path, abs);
    });

    it('names each file the spec refers to that does not exist', async () => {
      const file = write('x.grpo.json', { ...minimal(), dataset: { path: 'nope.jsonl', holdout: { path: 'data' } }, reward: { file: 'missing.py' } });
      await assert.rejects(parseGrpoSpecFile(file), (err: RunSpecError) => {
        assert.deepStrictEqual(err.problems, [
          `x.grpo.json: dataset.path: file "nope.jsonl" not found (looked for ${path.join(dir, 'nope.jsonl')})`,
          `x.grpo.json: dataset.holdout.path: "data" is not a file (${path.join(dir, 'data')})`,
          `x.grpo.json: reward.file: file "missing.py" not found (looked for ${path.join(dir, 'missing.py')})`,
        ]);
        return true;
      });
    });

    it('names the file in validation and syntax errors', async () => {
      await assert.rejects(parseGrpoSpecFile(write('bad.grpo.json', { ...minimal(), seed: -1 })), {
        message: 'bad.grpo.json: seed: must be at least 0',
      });
      fs.writeFileSync(path.join(dir, 'broken.grpo.json'), '{"model": }');
      await assert.rejects(parseGrpoSpecFile(path.join(dir, 'broken.grpo.json')), { message: "broken.grpo.json:1:11: invalid JSON: expected a value, found '}'" });
    });

    it('says when the spec file cannot be read', async () => {
      await assert.rejects(parseGrpoSpecFile(path.join(dir, 'absent.grpo.json')), {
        message: `${path.join(dir, 'absent.grpo.json')}: cannot read the spec file (ENOENT)`,
      });
    });

    it('reads the shipped arithmetic example', async () => {
      const loaded = await parseGrpoSpecFile(path.join(root, 'examples/arithmetic/arith.grpo.json'));
      assert.strictEqual(loaded.spec.name, 'arith');
      assert.strictEqual(loaded.spec.model, 'tinker-studio/arith-chat');
      assert.strictEqual(loaded.spec.renderer, 'chatml');
      assert.strictEqual(loaded.spec.max_tokens, 6);
      assert.strictEqual(loaded.spec.learning_rate, 2e-3);
      assert.strictEqual(loaded.spec.iterations, 101);
      assert.deepStrictEqual(loaded.spec.dataset!.holdout, { path: path.join(root, 'examples/arithmetic/holdout.jsonl') });
    });
  });

  describe('the JSON schema for editors', () => {
    const schema = grpoSpecJsonSchema();
    const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
    const example = JSON.parse(fs.readFileSync(path.join(root, 'examples/arithmetic/arith.grpo.json'), 'utf8'));

    it('accepts the shipped example and the minimal spec', () => {
      assert.ok(validate(example), JSON.stringify(validate.errors));
      assert.ok(validate(minimal()), JSON.stringify(validate.errors));
    });

    it('rejects what the zod schema rejects: a holdout fraction above 0.5, two sources, an unknown field, a missing model', () => {
      const { model: _m, ...noModel } = minimal();
      for (const bad of [
        { ...example, dataset: { path: 't.jsonl', holdout: { fraction: 0.7 } } },
        { ...example, dataset: { path: 't.jsonl', hf: { dataset: 'a/b' } } },
        { ...example, dataset: { path: 't.jsonl', holdout: { path: 'h.jsonl', fraction: 0.1 } } },
        { ...example, lora_rnak: 8 },
        noModel,
      ])
        assert.strictEqual(validate(bad), false, JSON.stringify(bad));
    });

    it('describes every field and gives the defaults', () => {
      const undescribed: string[] = [];
      const walk = (node: unknown, at: string) => {
        if (typeof node !== 'object' || node === null) return;
        const props = (node as { properties?: Record<string, { description?: string }> }).properties;
        for (const [k, v] of Object.entries(props ?? {})) {
          if (!v.description) undescribed.push(`${at}${k}`);
          walk(v, `${at}${k}.`);
        }
      };
      walk(schema, '');
      assert.deepStrictEqual(undescribed, []);
      const props = schema.properties as Record<string, { default?: unknown }>;
      assert.strictEqual(props.lora_rank?.default, 32);
      assert.strictEqual(props.loss_fn?.default, 'importance_sampling');
      // dataset and reward are required unless the spec distils (dataset_configs, teacher): the rules say so
      assert.deepStrictEqual(schema.required, ['model', 'max_tokens', 'iterations']);
    });

    it('is the file the build writes and the manifest contributes for *.grpo.json', () => {
      const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
      const entry = (pkg.contributes.jsonValidation as Array<{ fileMatch: string; url: string }>).find((e) => e.fileMatch === '*.grpo.json');
      assert.strictEqual(entry?.url, './dist/grpo-spec.schema.json');
      // run the build step itself (it bundles spec.ts with esbuild and asks it for the schema)
      const script = `import { build } from ${JSON.stringify(path.join(root, 'scripts/build-spec-schema.mjs'))};
        const [asset] = await build(${JSON.stringify(root)});
        process.stdout.write(JSON.stringify({ name: asset.name, schema: JSON.parse(Buffer.from(asset.bytes).toString('utf8')) }));`;
      const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
      assert.strictEqual(out.name, path.basename(entry.url));
      assert.deepStrictEqual(out.schema, schema);
      const ignore = fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8').split('\n').map((l) => l.trim());
      assert.ok(!ignore.some((l) => l === 'dist/**' || l === '**/*.json'), 'the VSIX must keep dist/grpo-spec.schema.json');
    });
  });
});
