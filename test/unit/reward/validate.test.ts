// Reward-file validation with real python3 and Node children: every kind of defect reported at its
// exact range with its message, and the fixed text validating clean.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import type { RewardDiagnostic } from '../../../src/core/reward/diagnostics';
import { parseExamples, RewardExample } from '../../../src/core/reward/examples';
import { summaryText } from '../../../src/core/reward/summary';
import { validateReward, ValidateRewardOptions } from '../../../src/core/reward/validate';
import { positionOf, tempDir } from './fixtures';

const ex = (completion: string, groundTruth: string, expected?: number): RewardExample => ({
  completion,
  groundTruth,
  ...(expected !== undefined ? { expected } : {}),
  source: `case ${completion}`,
});

const EXAMPLES = [ex('4', '4', 1), ex('5', '4', 0), ex('no number', '4', 0)];

const GOOD_PY = `import re

def compute_reward(completion, ground_truth):
    numbers = re.findall(r"-?\\d+", completion)
    if not numbers:
        return 0.0
    return 1.0 if int(numbers[-1]) == int(ground_truth) else 0.0
`;

const GOOD_TS = `export function computeReward(completion: string, groundTruth: string): number {
  const numbers = completion.match(/-?\\d+/g);
  if (!numbers) return 0;
  return Number(numbers[numbers.length - 1]) === Number(groundTruth) ? 1 : 0;
}
`;

/** the range of the `n`-th occurrence of `text` in `source` (1-based positions, end exclusive) */
function at(source: string, text: string, nth = 1): Pick<RewardDiagnostic, 'line' | 'column' | 'endLine' | 'endColumn'> {
  let from = -1;
  for (let i = 0; i < nth; i++) from = source.indexOf(text, from + 1);
  if (from < 0) throw new Error(`fixture has no ${JSON.stringify(text)}`);
  const p = positionOf(source.slice(0, from) + '\u0000', '\u0000');
  return { line: p.line, column: p.column, endLine: p.line, endColumn: p.column + text.length };
}

function brief(ds: readonly RewardDiagnostic[]) {
  return ds.map((d) => ({ line: d.line, column: d.column, endLine: d.endLine, endColumn: d.endColumn, severity: d.severity, code: d.code, message: d.message }));
}

describe('Reward validation', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = tempDir();
  });

  // the file on disk holds something else: validation runs the editor's text (ES modules need the file to exist)
  const validate = (name: string, source: string, examples: readonly RewardExample[] = EXAMPLES, o: Partial<ValidateRewardOptions> = {}) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, '\n');
    return validateReward({ file, source, examples, timeoutMs: 3000, ...o });
  };

  it('passes a correct Python function: every example matches, nothing to report', async () => {
    const v = await validate('good.py', GOOD_PY);
    assert.deepStrictEqual(v.diagnostics, []);
    assert.deepStrictEqual(v.exampleDiagnostics, []);
    assert.strictEqual(v.loaded, true);
    assert.deepStrictEqual(v.summary, { total: 3, withExpected: 3, matched: 3, failed: 0, mean: 1 / 3 });
    assert.strictEqual(summaryText(v.summary!), 'Test on 3 examples — 3 match, mean 0.33');
  });

  it('runs the text it is given, not the file on disk (unsaved edits)', async () => {
    const file = path.join(dir, 'ondisk.py');
    fs.writeFileSync(file, 'def compute_reward(c, g):\n    return 0.0\n');
    const v = await validateReward({ file, source: GOOD_PY, examples: EXAMPLES });
    assert.strictEqual(v.summary?.matched, 3);
  });

  it('reports a Python syntax error at its token', async () => {
    const src = 'def compute_reward(completion, ground_truth):\n    return 1 +* 2\n';
    const v = await validate('syntax.py', src);
    assert.deepStrictEqual(brief(v.diagnostics), [{ ...at(src, '*'), severity: 'error', code: 'syntax', message: 'SyntaxError: invalid syntax' }]);
    assert.strictEqual(v.loaded, false);
    assert.strictEqual(v.summary, undefined);
    const fixed = await validate('syntax.py', src.replace('+* 2', '+ 0'), []);
    assert.deepStrictEqual(fixed.diagnostics, []);
  });

  it('reports a missing function on the first line', async () => {
    const src = 'def compute_rewards(completion, ground_truth):\n    return 1.0\n';
    const v = await validate('missing.py', src);
    assert.deepStrictEqual(brief(v.diagnostics), [
      { line: 1, column: 1, endLine: 1, endColumn: 47, severity: 'error', code: 'missing-function', message: 'no function compute_reward(completion, ground_truth) is defined at the top level of the file' },
    ]);
    assert.deepStrictEqual((await validate('missing.py', src.replace('compute_rewards', 'compute_reward'), [])).diagnostics, []);
  });

  it('reports wrong parameters on the function name', async () => {
    const src = '\n\ndef compute_reward(completion):\n    return 1.0\n';
    const v = await validate('params.py', src);
    assert.deepStrictEqual(brief(v.diagnostics), [
      {
        ...at(src, 'compute_reward'),
        severity: 'error',
        code: 'parameters',
        message: 'compute_reward must take exactly two positional parameters (completion, ground_truth); it is declared as compute_reward(completion)',
      },
    ]);
  });

  it('maps an exception on an example to the line of the reward file the traceback names', async () => {
    const src = 'def compute_reward(completion, ground_truth):\n    return helper(completion)\n\ndef helper(text):\n    return 1 / (len(text) - 1)\n';
    const v = await validate('raises.py', src, [ex('4', '4'), ex('45', '4')]);
    assert.deepStrictEqual(brief(v.diagnostics), [
      { ...at(src, '1 / (len(text) - 1)'), severity: 'error', code: 'exception', message: 'ZeroDivisionError: division by zero (on example case 4)' },
    ]);
    assert.deepStrictEqual(v.summary, { total: 2, withExpected: 0, matched: 0, failed: 1, mean: 0.5 });
  });

  it('reports results that are not finite numbers, and results outside the range, on the function name', async () => {
    const src = 'def compute_reward(completion, ground_truth):\n    if completion == "nan":\n        return float("nan")\n    return float(completion)\n';
    const v = await validate('values.py', src, [ex('nan', 'x'), ex('1.5', 'x'), ex('-2', 'x'), ex('0.5', 'x')]);
    const name = at(src, 'compute_reward');
    assert.deepStrictEqual(brief(v.diagnostics), [
      { ...name, severity: 'error', code: 'not-finite', message: 'compute_reward returned nan, not a finite number (on example case nan)' },
      { ...name, severity: 'warning', code: 'out-of-range', message: 'compute_reward returned 1.5, outside the reward range [0, 1] (on 2 of 4 examples, first case 1.5)' },
    ]);
    const wide = await validate('values.py', src, [ex('1.5', 'x'), ex('-2', 'x')], { range: [-5, 5] });
    assert.deepStrictEqual(wide.diagnostics, []);
  });

  it('reports different results for the same input', async () => {
    const src = 'calls = []\n\ndef compute_reward(completion, ground_truth):\n    calls.append(1)\n    return 1.0 if len(calls) > 2 else 0.0\n';
    const v = await validate('counter.py', src, [ex('a', 'x'), ex('b', 'x')]);
    assert.deepStrictEqual(brief(v.diagnostics), [
      {
        ...at(src, 'compute_reward'),
        severity: 'warning',
        code: 'nondeterministic',
        message: 'compute_reward gave different results for the same input: 0, then 1; reward functions must be deterministic (on 2 of 2 examples, first case a)',
      },
    ]);
  });

  it('reports a call over the time limit, and the next examples still run', async () => {
    const src = 'def compute_reward(completion, ground_truth):\n    while completion == "spin":\n        pass\n    return 1.0\n';
    const v = await validate('spin.py', src, [ex('spin', 'x'), ex('ok', 'x')], { timeoutMs: 500 });
    assert.deepStrictEqual(brief(v.diagnostics), [
      { ...at(src, 'compute_reward'), severity: 'error', code: 'timeout', message: 'compute_reward took longer than the time limit of 500 ms; the call was stopped (on example case spin)' },
    ]);
    assert.deepStrictEqual(v.results.map((r) => r.outcome.reward), [0, 1]);
  });

  it('reports a worker that dies on an example as a crash on the function name, and scores the rest', async () => {
    const src = 'import os\n\ndef compute_reward(completion, ground_truth):\n    if completion == "5":\n        os._exit(3)\n    return 1.0\n';
    const v = await validate('dies.py', src, [ex('5', 'x'), ex('4', 'x')]);
    assert.deepStrictEqual(brief(v.diagnostics), [
      { ...at(src, 'compute_reward'), severity: 'error', code: 'crash', message: 'the Python worker exited with code 3 while running compute_reward; it was replaced (on example case 5)' },
    ]);
    assert.deepStrictEqual(v.results.map((r) => r.outcome.reward), [0, 1]);
  });

  it('rejects when its signal aborts, before anything runs', async () => {
    const controller = new AbortController();
    controller.abort(new Error('a newer edit'));
    await assert.rejects(validate('good.py', GOOD_PY, EXAMPLES, { signal: controller.signal }), /a newer edit/);
  });

  it('stops a slow load when its signal aborts, instead of waiting for the load to finish', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('a newer edit')), 300);
    const started = Date.now();
    await assert.rejects(validate('slow.py', `import time\ntime.sleep(20)\n${GOOD_PY}`, EXAMPLES, { signal: controller.signal }), /a newer edit/);
    assert.ok(Date.now() - started < 10_000, 'rejected long before the 20 s load would end');
  });

  it('warns about networking and process-spawning modules at their exact ranges, ignoring comments and strings', async () => {
    const src = [
      '"""uses no socket here"""',
      'import json, socket',
      'import urllib.request as req',
      'from subprocess import run',
      'from os import path, system',
      '# import requests',
      'import os',
      '',
      'def compute_reward(completion, ground_truth):',
      '    os.popen("ls")',
      '    return 1.0',
      '',
    ].join('\n');
    const v = await validate('net.py', src, []);
    const network = (what: string) => `the module "${what}" reaches the network: reward functions must run offline and be deterministic`;
    const proc = (what: string) => `${what} starts other processes: reward functions must not spawn processes`;
    assert.deepStrictEqual(brief(v.diagnostics), [
      { ...at(src, 'socket', 2), severity: 'warning', code: 'network', message: network('socket') },
      { ...at(src, 'urllib.request'), severity: 'warning', code: 'network', message: network('urllib.request') },
      { ...at(src, 'subprocess'), severity: 'warning', code: 'process', message: proc('the module "subprocess"') },
      { ...at(src, 'system'), severity: 'warning', code: 'process', message: proc('os.system') },
      { ...at(src, 'os.popen'), severity: 'warning', code: 'process', message: proc('os.popen') },
    ]);
  });

  it('warns about node:net, child_process and fetch in JS/TS', async () => {
    const src = [
      "import { connect } from 'node:net';",
      "const cp = require('child_process');",
      "// require('https')",
      'export async function computeReward(completion: string, groundTruth: string): Promise<number> {',
      "  const s = 'fetch(x)';",
      '  void (await fetch("http://127.0.0.1:1").catch(() => undefined));',
      '  return 1;',
      '}',
      '',
    ].join('\n');
    const v = await validate('net.ts', src, []);
    assert.deepStrictEqual(brief(v.diagnostics), [
      { ...at(src, 'node:net'), severity: 'warning', code: 'network', message: 'the module "node:net" reaches the network: reward functions must run offline and be deterministic' },
      { ...at(src, 'child_process'), severity: 'warning', code: 'process', message: 'the module "child_process" starts other processes: reward functions must not spawn processes' },
      { ...at(src, 'fetch', 2), severity: 'warning', code: 'network', message: 'fetch() reaches the network: reward functions must run offline and be deterministic' },
    ]);
  });

  it('reports a TypeScript syntax error, wrong parameters and a thrown error in JS/TS', async () => {
    const bad = 'export function computeReward(completion: string, groundTruth: string): number {\n  return (1 + ;\n}\n';
    const syntax = await validate('bad.ts', bad);
    assert.strictEqual(syntax.diagnostics.length, 1);
    assert.strictEqual(syntax.diagnostics[0]!.code, 'syntax');
    assert.deepStrictEqual([syntax.diagnostics[0]!.line, syntax.diagnostics[0]!.column], [2, 15]);
    assert.match(syntax.diagnostics[0]!.message, /^SyntaxError: /);

    const params = 'export function computeReward(completion: string): number {\n  return 1;\n}\n';
    assert.deepStrictEqual(brief((await validate('params.ts', params)).diagnostics), [
      { ...at(params, 'computeReward'), severity: 'error', code: 'parameters', message: 'computeReward must take exactly two parameters (completion, groundTruth); it declares 1' },
    ]);

    const throws = 'export function computeReward(completion: string, groundTruth: string): number {\n  if (completion === "5") throw new RangeError("too big");\n  return 1;\n}\n';
    const v = await validate('throws.ts', throws);
    assert.deepStrictEqual(brief(v.diagnostics), [
      { ...at(throws, 'new RangeError("too big");'), severity: 'error', code: 'exception', message: 'RangeError: too big (on example case 5)' },
    ]);

    const good = await validate('good.ts', GOOD_TS);
    assert.deepStrictEqual(good.diagnostics, []);
    assert.strictEqual(good.summary?.matched, 3);
  });

  it('puts a mismatch with an expected reward on the expected value of that examples-file line', async () => {
    const text = '{"completion": "4", "ground_truth": "4", "expected": 1}\n\n{"completion": "5", "ground_truth": 4, "expected": 1}\n';
    const parsed = parseExamples(text, 'reward.examples.jsonl');
    assert.deepStrictEqual(parsed.diagnostics, []);
    assert.deepStrictEqual(
      parsed.examples.map((e) => [e.source, e.line, e.groundTruth, e.expected]),
      [
        ['reward.examples.jsonl:1', 1, '4', 1],
        ['reward.examples.jsonl:3', 3, '4', 1],
      ],
    );
    const v = await validate('good.py', GOOD_PY, parsed.examples, { examplesText: text });
    assert.deepStrictEqual(brief(v.exampleDiagnostics), [{ line: 3, column: 52, endLine: 3, endColumn: 53, severity: 'warning', code: 'example-mismatch', message: 'expected 1, got 0' }]);
    assert.strictEqual(summaryText(v.summary!), 'Test on 2 examples — 1 match, mean 0.50');
  });

  it('reports examples-file lines that are not examples, by line', () => {
    const text = '{"completion": "4", "ground_truth": "4"}\nnot json\n{"completion": 4, "ground_truth": "4"}\n{"completion": "4"}\n{"completion": "4", "ground_truth": "4", "expectd": 1}\n[1]\n';
    const parsed = parseExamples(text, 'r.examples.jsonl');
    assert.strictEqual(parsed.examples.length, 1);
    assert.deepStrictEqual(
      parsed.diagnostics.map((d) => [d.line, d.column, d.endColumn, d.code, d.message.replace(/\(Unexpected.*\)|\(.*JSON.*\)/, '(…)')]),
      [
        [2, 1, 9, 'examples-file', 'not valid JSON (…); each line is {"completion": …, "ground_truth": …, "expected": …}'],
        [3, 1, 39, 'examples-file', 'completion: must be a string (the completion text)'],
        [4, 1, 20, 'examples-file', 'ground_truth: is required'],
        [5, 1, 55, 'examples-file', 'unknown field "expectd" (allowed: completion, ground_truth, expected)'],
        [6, 1, 4, 'examples-file', 'must be a JSON object {"completion": …, "ground_truth": …, "expected": …}'],
      ],
    );
  });
});
