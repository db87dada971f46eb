// IFEval graded as the cookbook grades it: every case of test/fixtures/benchmarks/ifeval.goldens.json
// (written by the cookbook's own Python verifier through scripts/goldens/ifeval.py) agrees per
// instruction, per prompt and in both accuracies; and the hub's row format becomes problems.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as z from 'zod';
import { gradeIfeval, ifeval, ifevalAccuracy } from '../../../src/core/evals/benchmarks/ifeval';
import { CHECKED_INSTRUCTIONS, verifyAllInstructions } from '../../../src/core/evals/benchmarks/ifeval/instructions';
import { instructionKwargs } from '../../../src/core/evals/benchmarks/ifeval/pyKwargs';

const root = path.resolve(__dirname, '../../../..');
const FIXTURES = path.join(root, 'test/fixtures/benchmarks');

const Goldens = z.object({
  cookbook: z.object({ tag: z.string(), commit: z.string().regex(/^[0-9a-f]{40}$/) }),
  accuracy: z.object({ strict_accuracy: z.number(), loose_accuracy: z.number() }),
  cases: z.array(
    z.object({
      name: z.string(),
      response: z.string(),
      instruction_id_list: z.array(z.string()),
      kwargs: z.array(z.unknown()),
      results: z.array(z.tuple([z.string(), z.boolean()])),
      fraction: z.number(),
      strict: z.boolean(),
    }),
  ),
});
const goldens = Goldens.parse(JSON.parse(fs.readFileSync(path.join(FIXTURES, 'ifeval.goldens.json'), 'utf8')));

/**
 * Deliberate differences, each with the condition under which it shows: case name → why. Our
 * character classes are the Unicode version of the Node that runs them; the goldens' Python 3.11 has
 * Unicode 14.0. U+0295 (ʕ) was a lowercase letter there and is not since Unicode 16.
 */
const UNICODE_AFTER_14 = !/\p{Lowercase}/u.test('\u0295');
const DIFFERENCES: Record<string, { applies: boolean; why: string }> = {
  'lowercase-8': { applies: UNICODE_AFTER_14, why: 'U+0295 is Ll in Unicode 14 (Python 3.11), Lo since Unicode 16' },
};

describe('IFEval: the cookbook verifier goldens', () => {
  it('has at least 300 cases, every instruction type the cookbook checks in several of them', () => {
    assert.ok(goldens.cases.length >= 300, `${goldens.cases.length} cases`);
    const seen = new Map<string, number>();
    for (const c of goldens.cases) for (const id of c.instruction_id_list) seen.set(id.trim(), (seen.get(id.trim()) ?? 0) + 1);
    const rare = CHECKED_INSTRUCTIONS.filter((id) => (seen.get(id) ?? 0) < 2 && !id.startsWith('count:counting_composition'));
    assert.deepStrictEqual(rare, [], 'instruction types in fewer than two golden cases');
    assert.strictEqual(CHECKED_INSTRUCTIONS.length, 48, 'the cookbook verifier knows 48 instruction types');
  });

  it('agrees with the cookbook on every instruction of every case, or the difference is a documented one', () => {
    const mismatches: string[] = [];
    for (const c of goldens.cases) {
      const kwargs = instructionKwargs(c.kwargs, c.instruction_id_list.length);
      const ours = verifyAllInstructions(c.response, c.instruction_id_list, kwargs);
      const same = JSON.stringify(ours.results) === JSON.stringify(c.results) && ours.fraction === c.fraction;
      const known = DIFFERENCES[c.name];
      if (known?.applies) {
        assert.ok(!same, `${c.name}: listed as a difference (${known.why}) but agrees: remove it from DIFFERENCES`);
        continue;
      }
      if (!same) mismatches.push(`${c.name}: ours ${JSON.stringify(ours.results)} ${ours.fraction}, cookbook ${JSON.stringify(c.results)} ${c.fraction}`);
    }
    assert.deepStrictEqual(mismatches, []);
  });

  it('grades each case through the definition (correct = strict, score = fraction) and reproduces both accuracies', () => {
    const grades = goldens.cases.map((c, i) => {
      const problem = ifeval.toProblem({ key: i, prompt: c.name, instruction_id_list: c.instruction_id_list, kwargs: c.kwargs }, i);
      const grade = ifeval.grade(c.response, problem);
      if (!DIFFERENCES[c.name]?.applies) {
        assert.strictEqual(grade.correct, c.strict, `${c.name}: correct`);
        assert.strictEqual(grade.score, c.fraction, `${c.name}: score`);
      }
      return { grade, golden: c };
    });
    // the stored figures, moved by our grade wherever a documented difference applies
    const n = grades.length;
    const moved = grades.filter((g) => DIFFERENCES[g.golden.name]?.applies);
    const strict = (goldens.accuracy.strict_accuracy * n + moved.reduce((s, g) => s + Number(g.grade.correct) - Number(g.golden.strict), 0)) / n;
    const loose = (goldens.accuracy.loose_accuracy * n + moved.reduce((s, g) => s + g.grade.score - g.golden.fraction, 0)) / n;
    const acc = ifevalAccuracy(grades.map((g) => g.grade));
    assert.ok(Math.abs(acc.strict_accuracy - strict) < 1e-12, `strict ${acc.strict_accuracy} vs ${strict}`);
    assert.ok(Math.abs(acc.loose_accuracy - loose) < 1e-12, `loose ${acc.loose_accuracy} vs ${loose}`);
  });

  it('loose accuracy is the mean share of instructions met, not the share of prompts', () => {
    const problem = ifeval.toProblem({ key: 1, prompt: 'p', instruction_id_list: ['punctuation:no_comma', 'keywords:existence'], kwargs: [null, { keywords: ['tea'] }] }, 0);
    const half = gradeIfeval('tea, please', problem);
    const all = gradeIfeval('tea please', problem);
    assert.deepStrictEqual([half.correct, half.score, all.correct, all.score], [false, 0.5, true, 1]);
    assert.strictEqual(half.extracted, '1/2 instructions met; missed punctuation:no_comma');
    assert.deepStrictEqual(ifevalAccuracy([half, all]), { strict_accuracy: 0.5, loose_accuracy: 0.75 });
  });
});

describe('IFEval: rows from the hub', () => {
  const RowsAnswer = z.object({ rows: z.array(z.object({ row_idx: z.number().int(), row: z.record(z.string(), z.unknown()) })) });
  const rows = RowsAnswer.parse(JSON.parse(fs.readFileSync(path.join(FIXTURES, 'ifeval.rows.json'), 'utf8'))).rows;

  it('reads each row as a problem: its key as the id, its prompt as it is, its instructions with their kwargs', () => {
    const problems = rows.map((r) => ifeval.toProblem(r.row, r.row_idx));
    assert.deepStrictEqual(
      problems.map((p) => p.id),
      rows.map((r) => String(r.row.key)),
    );
    assert.deepStrictEqual(
      problems.map((p) => p.prompt),
      rows.map((r) => r.row.prompt),
    );
    const first = problems[0]!.answer as { instruction_id_list: string[]; kwargs: Record<string, unknown>[] };
    assert.deepStrictEqual(first.instruction_id_list, ['detectable_format:number_bullet_lists', 'punctuation:no_comma']);
    assert.strictEqual(first.kwargs[0]!.num_bullets, 3);
    assert.strictEqual(first.kwargs[0]!.relation, null, "the hub's unused kwargs stay null, as the cookbook reads them");
  });

  it('grades responses to the fixture rows as the cookbook would', () => {
    const byKey = new Map(rows.map((r) => [String(r.row.key), ifeval.toProblem(r.row, r.row_idx)]));
    const grade = (key: string, response: string) => ifeval.grade(response, byKey.get(key)!);
    assert.deepStrictEqual(grade('9001', '* Wake before dawn\n* Climb the stairs\n* Polish the lens'), { correct: true, score: 1, extracted: '2/2 instructions met' });
    assert.strictEqual(grade('9001', '* Wake, then climb\n* Polish').score, 0);
    assert.strictEqual(grade('9003', 'Yeast makes gas.').score, 1 / 3, 'uppercase and too short: only the keywords are met');
    // "less than" is not a relation the cookbook knows: the frequency check passes whatever the count
    assert.strictEqual(grade('9005', '{"city": "Lyon", "river": "Rhône"} river river river Any other questions?').correct, true);
    assert.strictEqual(grade('9005', '{"city": "Lyon"} Anything else?').score, 2 / 3);
  });

  it('names the row and the field when a row does not fit', () => {
    const { instruction_id_list: _dropped, ...noIds } = rows[0]!.row;
    assert.throws(() => ifeval.toProblem(noIds, 7), /^Error: ifeval: row 7: instruction_id_list: is required$/);
    assert.throws(() => ifeval.toProblem({ ...rows[0]!.row, kwargs: 'x' }, 2), /ifeval: row 2: kwargs: must be/);
    const deep = '['.repeat(1500) + ']'.repeat(1500);
    assert.throws(() => ifeval.toProblem({ ...rows[0]!.row, kwargs: [deep, null] }, 3), /ifeval: row 3: kwargs\[0\]: its JSON is nested too deeply/);
  });

  it('says what is wrong when a problem answer is not an instruction list', () => {
    assert.throws(() => gradeIfeval('x', { id: 'p9', prompt: 'p', answer: { instruction_id_list: 'nope', kwargs: [] } }), /ifeval: problem p9: .*instruction_id_list: must be/);
  });
});
