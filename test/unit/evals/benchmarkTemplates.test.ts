// The editor's benchmark templates (suite files by use case) and the Inspect command line.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { BENCHMARK_NAMES } from '../../../src/core/evals/benchmarks/contract';
import { BENCHMARK_LABELS, BENCHMARK_TEMPLATES, benchmarkEvalSpec, benchmarkTemplate, templateSuite } from '../../../src/core/evals/benchmarks/templates';
import { inspectEvalCommand, INSPECT_TASK_SUGGESTIONS } from '../../../src/core/evals/inspectCommand';
import { openAiBaseUrl } from '../../../src/core/openai/endpoint';
import { loadSuite } from '../../../src/core/suite/store';

describe('benchmark templates and the Inspect command', () => {
  it('every benchmark has a label, and the three templates hold the benchmarks of their use case', () => {
    assert.deepStrictEqual(Object.keys(BENCHMARK_LABELS).sort(), [...BENCHMARK_NAMES].sort());
    assert.deepStrictEqual(
      BENCHMARK_TEMPLATES.map((t) => [t.id, [...t.benchmarks], t.product]),
      [
        ['chat', ['ifeval', 'mmlu_redux', 'gsm8k'], 'data'],
        ['math', ['gsm8k', 'math500', 'aime_2025'], 'data'],
        ['tools', ['ifeval'], 'env'],
      ],
    );
  });

  it('a template writes a suite file the suite layer reads: benchmarks in the benchmark layer, a product placeholder, a seeded subset', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-templates-'));
    try {
      for (const t of BENCHMARK_TEMPLATES) {
        const w = templateSuite(t, { backend: 'local', max_problems: 50 });
        const file = path.join(dir, w.suiteFile);
        fs.writeFileSync(file, JSON.stringify(w.suite));
        const suite = await loadSuite(file);
        assert.deepStrictEqual(suite.entries.map((e) => [e.name, e.layer, e.metric]), [...t.benchmarks.map((b) => [b, 'benchmark', 'pass@1']), ['product', 'product', 'pass@1']]);
        for (const e of suite.entries.slice(0, -1)) assert.deepStrictEqual(e.spec.eval, { benchmark: e.name, max_problems: 50, seed: 0, backend: 'local' });
        assert.strictEqual(suite.entries.at(-1)!.evalFile, path.join(dir, `${t.id}-product.eval.json`));
        assert.deepStrictEqual(w.placeholders.map((p) => p.file), [`${t.id}-product.eval.json`]);
        const v = w.placeholders[0]!.value;
        assert.ok(t.product === 'env' ? 'env' in v && !('grader' in v) : 'grader' in v && !('env' in v), `${t.id}: the product layer is ${t.product}`);
      }
      const own = templateSuite(benchmarkTemplate('math')!, { backend: 'cloud', productEval: 'holdout.eval.json' });
      assert.deepStrictEqual(own.placeholders, [], "the user's own eval spec needs no placeholder");
      assert.deepStrictEqual((own.suite['entries'] as unknown[]).at(-1), { name: 'product', layer: 'product', eval: 'holdout.eval.json' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a single benchmark spec names the benchmark, the subset and the targets, and leaves the sampling to the benchmark', () => {
    assert.deepStrictEqual(benchmarkEvalSpec('gsm8k', ['tinker-studio/arith-chat', 'tinker://r/sampler_weights/final'], { backend: 'local', max_problems: 50 }), {
      benchmark: 'gsm8k',
      max_problems: 50,
      seed: 0,
      backend: 'local',
      targets: ['tinker-studio/arith-chat', 'tinker://r/sampler_weights/final'],
    });
  });

  it('the Inspect command runs an Inspect Evals task on the checkpoint through the backend\'s OpenAI-compatible base', () => {
    assert.strictEqual(
      inspectEvalCommand({ task: 'gsm8k', model: 'tinker://run-1/sampler_weights/final', baseUrl: openAiBaseUrl('local', 'http://127.0.0.1:8765') }),
      'inspect eval inspect_evals/gsm8k --model openai/tinker://run-1/sampler_weights/final --model-base-url http://127.0.0.1:8765/v1',
    );
    assert.strictEqual(
      inspectEvalCommand({ task: 'inspect_evals/ifeval', model: 'Qwen/Qwen3-8B', baseUrl: openAiBaseUrl('cloud', 'https://tinker.example/services/x/') , limit: 50 }),
      'inspect eval inspect_evals/ifeval --model openai/Qwen/Qwen3-8B --model-base-url https://tinker.example/services/x/oai/api/v1 --limit 50',
    );
    assert.match(inspectEvalCommand({ task: 'gsm8k', model: "it's a model", baseUrl: 'http://h/v1' }), /--model 'openai\/it'\\''s a model'/);
    assert.throws(() => inspectEvalCommand({ task: 'gsm8k; rm -rf /', model: 'm', baseUrl: 'http://h/v1' }), /not an Inspect task name/);
    assert.ok(INSPECT_TASK_SUGGESTIONS.some((s) => s.task === 'gsm8k'));
  });
});
