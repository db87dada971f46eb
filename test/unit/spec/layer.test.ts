// The spec layer: one table of kinds that the manifest agrees with, the same shared fields, base_url
// rule, overrides and positioned diagnostics for every kind, and reading a run's stored spec back.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { specDiagnostics } from '../../../src/core/spec/diagnostics';
import { jsonPlaces } from '../../../src/core/spec/jsonSyntax';
import {
  defaultRunName,
  isSpecKind,
  SPEC_KIND_IDS,
  OTHER_SPEC_FILES,
  SPEC_KINDS,
  type SpecKind,
  specFileMatch,
  specGlob,
  specKind,
  specKindOfConfig,
  specKindOfFile,
} from '../../../src/core/spec/kinds';
import { mergeSpec } from '../../../src/core/spec/overrides';
import { specDefinition } from '../../../src/core/kinds/specDefinition';
import { specJsonSchemas } from '../../../src/core/experiments/specSchemas';
import { RunSpecError } from '../../../src/core/spec/text';

const root = path.resolve(__dirname, '../../../..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

/** The smallest valid spec of each kind (the files it names need not exist to parse its text). */
const MINIMAL: Record<SpecKind, Record<string, unknown>> = {
  grpo: { model: 'tinker-studio/arith-gpt', max_tokens: 6, iterations: 3, dataset: { path: 'train.jsonl' }, reward: { file: 'reward.py' } },
  sft: { model: 'tinker-studio/arith-gpt', dataset: { path: 'chats.jsonl' } },
  dpo: { model: 'tinker-studio/arith-gpt', dataset: { path: 'pairs.jsonl' } },
};

function problemsOf(f: () => unknown): string[] {
  try {
    f();
  } catch (e) {
    if (e instanceof RunSpecError) return e.problems;
    throw e;
  }
  return [];
}

/** Spec files that are not a kind of run but that the extension starts from their menus (an eval spec: Run Eval). */
const STARTABLE_FILES = OTHER_SPEC_FILES.flatMap((f) => ('startCommand' in f ? [f] : []));

describe('spec layer', () => {
  describe('the kinds table', () => {
    it('gives every kind a unique id, label, extension and schema file, and a spec definition of that kind', async () => {
      for (const key of ['id', 'label', 'extension', 'schemaFile', 'startCommand'] as const) {
        const values = SPEC_KINDS.map((k) => k[key].toLowerCase());
        assert.strictEqual(new Set(values).size, values.length, `${key} repeats: ${values.join(', ')}`);
      }
      for (const k of SPEC_KINDS) {
        assert.match(k.extension, /^\.[a-z]+\.json$/, k.id);
        for (const other of SPEC_KINDS) if (other !== k) assert.ok(!k.extension.endsWith(other.extension), `${k.extension} ends in ${other.extension}`);
        const def = await specDefinition(k.id);
        assert.strictEqual(def.kind, k.id);
        assert.ok(Object.keys(def.schema.shape).length > 0, `${k.id} has a schema`);
      }
    });

    it('tells a spec file and a run config.json by kind, and names a run from its spec file', () => {
      for (const k of SPEC_KINDS) {
        assert.strictEqual(specKindOfFile(`/w/My Run${k.extension.toUpperCase()}`), k.id);
        assert.strictEqual(defaultRunName(`/w/My Run (2)${k.extension}`), 'My-Run-2-');
        assert.strictEqual(defaultRunName(`/w/${k.extension}`), k.fallbackName);
        assert.ok(isSpecKind(k.id));
      }
      assert.strictEqual(specKindOfFile('/w/data.json'), undefined);
      assert.strictEqual(specKindOfConfig({ run_kind: 'sft' }), 'sft');
      assert.strictEqual(specKindOfConfig({ model_name: 'm' }), 'grpo', 'a config from before run_kind is a GRPO run');
      assert.strictEqual(specKindOfConfig({ run_kind: 'dpo' }), 'dpo');
      assert.strictEqual(specKindOfConfig({ run_kind: 'ppo' }), 'grpo');
      assert.ok(!isSpecKind('ppo'));
    });

    it('is what package.json contributes: a JSON schema and an activation per kind, and its start command', () => {
      const validation = pkg.contributes.jsonValidation as Array<{ fileMatch: string; url: string }>;
      assert.deepStrictEqual(
        validation.map((v) => [v.fileMatch, v.url]),
        // the suite file's schema comes last (src/core/suite/jsonSchema.ts: suite/ sits above the specs' schemas)
        [...SPEC_KIND_IDS.map((k) => [specFileMatch(k), `./dist/${specKind(k).schemaFile}`]), ...OTHER_SPEC_FILES.map((f) => [`*${f.extension}`, `./dist/${f.schemaFile}`]), ['*.suite.json', './dist/suite.schema.json']],
      );
      const activations = pkg.activationEvents as string[];
      // a suite file activates the extension too (its CodeLens and diagnostics); it is no run spec
      assert.ok(activations.includes('workspaceContains:**/*.suite.json'), 'activation on *.suite.json');
      assert.ok(activations.includes('workspaceContains:tinker-models.json'), 'activation on the model registry');
      const notSpecs = ['workspaceContains:**/*.suite.json', 'workspaceContains:tinker-models.json'];
      const specActivations = activations.filter((e) => e.startsWith('workspaceContains:') && e.endsWith('.json') && !notSpecs.includes(e) && !OTHER_SPEC_FILES.some((f) => !('startCommand' in f) && e.endsWith(`*${f.extension}`)));
      // sweep files activate the extension too (their CodeLens and Start Sweep), JSON and YAML
      for (const ext of ['json', 'yaml', 'yml']) assert.ok(activations.includes(`workspaceContains:**/*.sweep.${ext}`), `activation on *.sweep.${ext}`);
      assert.deepStrictEqual(
        specActivations,
        [...SPEC_KIND_IDS.map((k) => `workspaceContains:${specGlob(k)}`), ...STARTABLE_FILES.map((f) => `workspaceContains:**/*${f.extension}`)],
      );
      const commands = new Set((pkg.contributes.commands as Array<{ command: string }>).map((c) => c.command));
      for (const k of [...SPEC_KINDS, ...STARTABLE_FILES]) assert.ok(commands.has(k.startCommand), `${k.startCommand} is not contributed`);
    });

    const SWEEP_FILE_TEST = 'resourceFilename =~ /\\.sweep\\.(json|ya?ml)$/';
    const ENV_FILE_TEST = 'resourceFilename =~ /\\.env\\.(py|js|mjs|cjs|ts)$/';
    it('is what the menus offer on a spec file: its kind start command, and only in a trusted workspace when the kind runs workspace code', () => {
      const menus = pkg.contributes.menus as Record<string, Array<{ command: string; when?: string }>>;
      const fileTest = (ext: string) => `resourceFilename =~ /${ext.replace(/\./g, '\\.')}$/`;
      for (const k of [...SPEC_KINDS, ...STARTABLE_FILES]) {
        for (const menu of ['editor/title/run', 'explorer/context']) {
          const item = menus[menu]?.find((i) => i.command === k.startCommand);
          assert.ok(item?.when?.includes(fileTest(k.extension)), `${menu}: ${k.startCommand} on ${k.extension} files (when: ${item?.when})`);
          assert.strictEqual(item?.when?.includes('isWorkspaceTrusted'), k.runsWorkspaceCode, `${menu}: ${k.startCommand} and workspace trust`);
        }
      }
      // every menu that tests a spec file's name tests a kind's extension with that kind's start command
      for (const [menu, items] of Object.entries(menus))
        for (const i of items)
          for (const m of (i.when ?? '').matchAll(/resourceFilename =~ \/(.*?)\$\//g)) {
            // a sweep file (JSON or YAML): Start Sweep, in a trusted workspace (its runs may execute the reward function)
            if (m[0] === SWEEP_FILE_TEST) {
              assert.strictEqual(i.command, 'tinker.startSweep', `${menu}: ${m[0]}`);
              assert.ok(i.when?.includes('isWorkspaceTrusted'), `${menu}: ${i.command} and workspace trust`);
              continue;
            }
            // an environment file (issue 36): Dry Run Episode and Play as the Model, in a trusted workspace (they run its code)
            if (m[0] === ENV_FILE_TEST) {
              assert.ok(['tinker.dryRunEpisode', 'tinker.playAsModel'].includes(i.command), `${menu}: ${m[0]}`);
              assert.ok(i.when?.includes('isWorkspaceTrusted'), `${menu}: ${i.command} and workspace trust`);
              continue;
            }
            const kind = [...SPEC_KINDS, ...STARTABLE_FILES].find((k) => fileTest(k.extension) === m[0]);
            assert.ok(kind, `${menu}: ${i.command} tests ${m[0]}, no kind's extension`);
            assert.strictEqual(i.command, kind.startCommand, `${menu}: ${m[0]}`);
          }
    });

    it('builds a JSON schema per kind under the file name the manifest names', async () => {
      const built = await specJsonSchemas();
      assert.deepStrictEqual(
        built.map((b) => b.file),
        [...SPEC_KINDS.map((k) => k.schemaFile), ...OTHER_SPEC_FILES.map((f) => f.schemaFile)],
      );
      for (const b of built) assert.strictEqual(b.schema.type, 'object');
    });
  });

  for (const kind of SPEC_KIND_IDS) {
    describe(`what every kind shares: ${kind}`, () => {
      const file = `a${specKind(kind).extension}`;
      const parse = async (value: unknown) => {
        const def = await specDefinition(kind);
        return problemsOf(() => def.parseText(JSON.stringify(value), file));
      };

      it('the shared fields with their defaults', async () => {
        const def = await specDefinition(kind);
        const s = def.parseText(JSON.stringify(MINIMAL[kind]), file) as Record<string, unknown>;
        assert.deepStrictEqual(
          { backend: s.backend, lora_rank: s.lora_rank, save_every: s.save_every, seed: s.seed },
          { backend: 'local', lora_rank: 32, save_every: 20, seed: 0 },
        );
        const props = def.jsonSchema().properties as Record<string, { description?: string }>;
        for (const field of ['name', 'backend', 'base_url', 'model', 'load_checkpoint_path', 'renderer', 'lora_rank', 'learning_rate', 'save_every', 'eval_every', 'seed', 'ttl_seconds'])
          assert.ok(props[field]?.description, `${kind}: ${field}`);
        assert.match(props.name!.description!, new RegExp(`without \`${specKind(kind).extension.replace(/\./g, '\\.')}\``));
        assert.match(props.save_every!.description!, new RegExp(`every this many ${specKind(kind).unit.many}`));
      });

      it('the base_url rule: only with the custom backend, and an http(s) URL', async () => {
        assert.deepStrictEqual(await parse({ ...MINIMAL[kind], base_url: 'http://127.0.0.1:8000' }), [`${file}: base_url: only used with backend "custom" (backend is "local")`]);
        assert.deepStrictEqual(await parse({ ...MINIMAL[kind], backend: 'cloud', base_url: 'http://127.0.0.1:8000' }), [`${file}: base_url: only used with backend "custom" (backend is "cloud")`]);
        assert.deepStrictEqual(await parse({ ...MINIMAL[kind], backend: 'custom', base_url: '127.0.0.1:8000' }), [
          `${file}: base_url: must be an http:// or https:// URL, e.g. http://127.0.0.1:8000`,
        ]);
        assert.deepStrictEqual(await parse({ ...MINIMAL[kind], backend: 'custom', base_url: 'https://tinker.example:8443/v1' }), []);
      });

      it('a dataset gives exactly one source, in the run and in the editor', async () => {
        const dataset = MINIMAL[kind].dataset as Record<string, unknown>;
        if (kind === 'dpo') {
          // a pairs dataset is a JSONL file only (no Hugging Face source)
          assert.deepStrictEqual(await parse({ ...MINIMAL[kind], dataset: { ...dataset, hf: { dataset: 'a/b' } } }), [`${file}: dataset.hf: unknown field`]);
          const props = (await specDefinition(kind)).jsonSchema().properties as Record<string, { required?: unknown }>;
          assert.deepStrictEqual(props.dataset?.required, ['path']);
          return;
        }
        assert.deepStrictEqual(await parse({ ...MINIMAL[kind], dataset: { ...dataset, hf: { dataset: 'a/b' } } }), [`${file}: dataset: give either "path" or "hf", not both`]);
        const { path: _p, ...noSource } = dataset;
        assert.deepStrictEqual(await parse({ ...MINIMAL[kind], dataset: noSource }), [`${file}: dataset: give "path" (a JSONL file) or "hf" (a Hugging Face dataset)`]);
        const props = (await specDefinition(kind)).jsonSchema().properties as Record<string, { oneOf?: unknown }>;
        assert.deepStrictEqual(props.dataset?.oneOf, [{ required: ['path'] }, { required: ['hf'] }]);
      });

      it('overrides on top of the file: nested objects merge, the rest replaces, and the result is validated as the file', async () => {
        const def = await specDefinition(kind);
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-layer-'));
        try {
          const specFile = path.join(dir, file);
          const text = JSON.stringify({ ...MINIMAL[kind], name: 'from-file' });
          for (const f of ['train.jsonl', 'chats.jsonl', 'reward.py', 'other.jsonl']) fs.writeFileSync(path.join(dir, f), '');
          const loaded = await def.parseWithOverrides(text, specFile, { lora_rank: 8, dataset: { path: 'other.jsonl' } });
          const spec: Record<string, unknown> = loaded.spec;
          assert.strictEqual(spec.lora_rank, 8);
          assert.strictEqual(spec.name, 'from-file');
          assert.deepStrictEqual(spec.dataset, { ...(spec.dataset as object), path: path.join(dir, 'other.jsonl') }, 'an overridden path resolves against the spec file');
          await assert.rejects(def.parseWithOverrides(text, specFile, { lora_rank: 0 }), { message: `${file}: lora_rank: must be at least 1` });
          await assert.rejects(def.parseWithOverrides(text, specFile, { dataset: { path: 'missing.jsonl' } }), (e: unknown) => e instanceof RunSpecError && /dataset\.path: file "missing\.jsonl" not found/.test(e.message));
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      });

      it('the spec a run stored in its config.json reads back, and a stored spec that is not valid says so', async () => {
        const def = await specDefinition(kind);
        const stored = { ...def.parseText(JSON.stringify({ ...MINIMAL[kind], name: 'r1' }), file), model_name: 'extra keys are left out' };
        assert.strictEqual(def.fromConfig(stored, 'config.json').name, 'r1');
        assert.throws(() => def.fromConfig({ ...stored, lora_rank: -1 }, 'config.json'), { message: `config.json: the stored ${specKind(kind).label} spec is not valid: lora_rank: must be at least 1` });
        assert.throws(() => def.fromConfig({ ...stored, name: undefined }, 'config.json'), { message: 'config.json: the stored spec has no name' });
      });

      it('diagnostics at the field they are about: a wrong value, an unknown field, a missing field, a syntax error', async () => {
        const def = await specDefinition(kind);
        const text = JSON.stringify({ ...MINIMAL[kind], lora_rank: 0, colour: 'red' }, null, 2);
        const diags = specDiagnostics(def, text);
        const where = (needle: string, inText = text) => {
          const offset = inText.indexOf(needle);
          const before = inText.slice(0, offset);
          return { line: before.split('\n').length, column: offset - (before.lastIndexOf('\n') + 1) + 1, offset, length: needle.length };
        };
        assert.deepStrictEqual(diags, [
          { ...where('"lora_rank"'), message: 'lora_rank: must be at least 1', rule: false },
          { ...where('"colour"'), message: 'colour: unknown field', rule: false },
        ]);
        const { model: _m, ...noModel } = MINIMAL[kind];
        assert.deepStrictEqual(specDiagnostics(def, `\n  ${JSON.stringify(noModel)}`), [{ line: 2, column: 3, offset: 3, length: 1, message: 'model: is required', rule: false }]);
        const broken = '{\n  "model": "m",\n}\n';
        assert.deepStrictEqual(specDiagnostics(def, broken), [{ line: 3, column: 1, offset: broken.indexOf('}'), length: 1, message: "invalid JSON: a trailing comma before '}'", rule: false }]);
        assert.deepStrictEqual(problemsOf(() => def.parseText(broken, file)), [`${file}:3:1: invalid JSON: a trailing comma before '}'`], 'the run reports the same position');
        assert.deepStrictEqual(specDiagnostics(def, JSON.stringify(MINIMAL[kind])), []);
        // the base_url rule, which the JSON schema cannot say, is a rule at the base_url field
        const local = JSON.stringify({ ...MINIMAL[kind], base_url: 'http://127.0.0.1:8000' }, null, 2);
        assert.deepStrictEqual(specDiagnostics(def, local), [{ ...where('"base_url"', local), message: 'base_url: only used with backend "custom" (backend is "local")', rule: true }]);
      });
    });
  }

  describe('overrides', () => {
    it('merges overrides into a spec: nested objects merge, other values replace', () => {
      assert.deepStrictEqual(mergeSpec({ a: 1, dataset: { path: 'x', holdout: { fraction: 0.1 } }, stop: ['a'] }, { a: 2, dataset: { holdout: { fraction: 0.2 } }, stop: ['b'] }), {
        a: 2,
        dataset: { path: 'x', holdout: { fraction: 0.2 } },
        stop: ['b'],
      });
    });

    it('replaces a nested object by null or a list, adds new fields, and leaves a base that is no object as it is', () => {
      assert.deepStrictEqual(mergeSpec({ dataset: { path: 'x' }, stop: ['a'] }, { dataset: null, stop: [], lr: 1 }), { dataset: null, stop: [], lr: 1 });
      assert.deepStrictEqual(mergeSpec({ stop: ['a'] }, { stop: { x: 1 } }), { stop: { x: 1 } });
      assert.deepStrictEqual(mergeSpec([1], { a: 1 }), [1]);
      const base = { dataset: { path: 'x' } };
      mergeSpec(base, { dataset: { path: 'y' } });
      assert.deepStrictEqual(base, { dataset: { path: 'x' } }, 'the base is not changed');
    });
  });

  it('finds every field of a JSON text by its path, list items included', () => {
    const text = '{"a": {"b": [1, {"c": true}]}, "d": "x"}';
    const places = jsonPlaces(text);
    assert.deepStrictEqual(places.get('["a","b",1,"c"]'), { value: text.indexOf('true'), key: { offset: text.indexOf('"c"'), length: 3 } });
    assert.deepStrictEqual(places.get('["a","b",0]'), { value: text.indexOf('1') });
    assert.deepStrictEqual(places.get('[]'), { value: 0 });
    assert.strictEqual(places.get('["d"]')?.key?.offset, text.indexOf('"d"'));
  });
});
