// The benchmark graders against the cookbook's own Python graders: every case of
// test/fixtures/benchmarks/<name>.goldens.json (scripts/goldens/benchmark_graders.py) is graded here
// and must agree, except the deliberate differences listed below (docs/benchmarks.md says why).
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as z from 'zod';
import { benchmarkDefinition } from '../../../src/core/evals/benchmarks/registry';
import type { BenchmarkName } from '../../../src/core/evals/benchmarks/contract';

const root = path.resolve(__dirname, '../../../..');
const FIXTURES = path.join(root, 'test/fixtures/benchmarks');

const Goldens = z.object({
  benchmark: z.string(),
  made_by: z.object({ tinker_cookbook: z.string(), sympy: z.string(), pylatexenc: z.string() }),
  cases: z.array(z.object({ response: z.string(), answer: z.union([z.string(), z.number()]), correct: z.boolean(), extracted: z.string(), raises: z.string().optional() })),
});

/** Deliberate differences: (benchmark, response, answer) → why ours differs from the cookbook's. */
const DIFFERENCES: Array<{ benchmark: BenchmarkName; response: string; answer: string | number; why: string }> = [];

const BENCHMARKS: BenchmarkName[] = ['gsm8k', 'math500', 'aime_2025', 'mmlu_redux'];

describe('benchmark graders agree with the cookbook’s Python graders (goldens)', () => {
  for (const name of BENCHMARKS) {
    it(`${name}: every golden case (at least 300) grades as the cookbook grades it`, () => {
      const g = Goldens.parse(JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.goldens.json`), 'utf8')));
      assert.ok(g.cases.length >= 300, `${name}: only ${g.cases.length} cases`);
      const def = benchmarkDefinition(name);
      const disagree: string[] = [];
      let documented = 0;
      for (const [i, c] of g.cases.entries()) {
        const ours = def.grade(c.response, { id: `case-${i}`, prompt: '', answer: c.answer });
        const known = DIFFERENCES.find((d) => d.benchmark === name && d.response === c.response && d.answer === c.answer);
        const same = ours.correct === c.correct && ours.score === (c.correct ? 1 : 0) && (ours.extracted ?? '') === c.extracted;
        if (known) {
          assert.ok(!same, `${name} case ${i} is listed as a difference but agrees: remove it from DIFFERENCES`);
          documented++;
        } else if (!same) disagree.push(`case ${i}: ${JSON.stringify(c.response)} vs ${JSON.stringify(c.answer)}: cookbook ${c.correct} (${JSON.stringify(c.extracted)}), ours ${ours.correct} (${JSON.stringify(ours.extracted)})`);
      }
      assert.deepStrictEqual(disagree, [], `${disagree.length} of ${g.cases.length} disagree:\n${disagree.slice(0, 40).join('\n')}`);
      assert.ok(documented <= DIFFERENCES.length);
    });
  }
});
