// The reward-function editor in a real extension host: reward files with each kind of defect are
// opened, their diagnostics awaited (onDidChangeDiagnostics) and asserted exactly (range and
// message), then the file is fixed and the diagnostics must clear. Also: the CodeLens and hover
// with the examples' results, mismatches on the examples file, validation of unsaved edits,
// New Reward Function and Dry Run Reward on a run's samples.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { groupBreakdown } from '../../../src/core/rollouts/advantages';
import type { DryRunReport } from '../../../src/core/rollouts/dryRun';
import type { TinkerStudioTestHandles } from '../../../src/extension';
import { activateExtension, waitFor, workspaceRoot } from '../helpers';

const LIMIT = 90_000;

interface Expected {
  range: [number, number, number, number];
  severity: vscode.DiagnosticSeverity;
  code: string;
  message: string;
}

const E = vscode.DiagnosticSeverity.Error;
const W = vscode.DiagnosticSeverity.Warning;

function brief(ds: readonly vscode.Diagnostic[]): Expected[] {
  return ds.map((d) => ({
    range: [d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character],
    severity: d.severity,
    code: String(d.code),
    message: d.message,
  }));
}

/** 0-based range of the n-th occurrence of `text` in `source` */
function rangeOf(source: string, text: string, nth = 1): [number, number, number, number] {
  let at = -1;
  for (let i = 0; i < nth; i++) at = source.indexOf(text, at + 1);
  assert.ok(at >= 0, `fixture has ${JSON.stringify(text)}`);
  const before = source.slice(0, at).split('\n');
  const line = before.length - 1;
  const col = before[before.length - 1]!.length;
  return [line, col, line, col + text.length];
}

/** resolves once `uri`'s diagnostics satisfy `ok` (checked now and on every change), or fails after LIMIT */
function diagnosticsOf(uri: vscode.Uri, ok: (ds: vscode.Diagnostic[]) => boolean, what: string): Promise<vscode.Diagnostic[]> {
  return new Promise((resolve, reject) => {
    const current = () => vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'Tinker reward');
    const now = current();
    if (ok(now)) return resolve(now);
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`timed out waiting for ${what}; diagnostics now: ${JSON.stringify(brief(current()))}`));
    }, LIMIT);
    const sub = vscode.languages.onDidChangeDiagnostics((e) => {
      if (!e.uris.some((u) => u.toString() === uri.toString())) return;
      const ds = current();
      if (!ok(ds)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(ds);
    });
  });
}

const sameAs = (expected: Expected[]) => (ds: vscode.Diagnostic[]) => JSON.stringify(brief(ds)) === JSON.stringify(expected);
const none = (ds: vscode.Diagnostic[]) => ds.length === 0;

async function replaceText(doc: vscode.TextDocument, text: string, save: boolean): Promise<void> {
  const edit = new vscode.WorkspaceEdit();
  edit.replace(doc.uri, new vscode.Range(0, 0, doc.lineCount, 0), text);
  assert.ok(await vscode.workspace.applyEdit(edit));
  if (save) assert.ok(await doc.save());
}

const NETWORK = (m: string) => `the module "${m}" reaches the network: reward functions must run offline and be deterministic`;

suite('Reward functions: inline validation, examples and dry runs', function () {
  this.timeout(LIMIT * 3);
  let api: TinkerStudioTestHandles;
  let dir: string;

  suiteSetup(async () => {
    api = await activateExtension();
    dir = path.join(workspaceRoot(), 'reward-tests');
    fs.mkdirSync(dir, { recursive: true });
    // examples shared by the Python files below: reward.examples.jsonl is found by name, so each file gets its own copy
    await vscode.workspace.getConfiguration('tinker').update('rewardFiles', ['reward-tests/*.py'], vscode.ConfigurationTarget.Global);
    // edits must stay unsaved until a test saves them
    await vscode.workspace.getConfiguration('files').update('autoSave', 'off', vscode.ConfigurationTarget.Global);
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.workspace.getConfiguration('tinker').update('rewardFiles', undefined, vscode.ConfigurationTarget.Global);
    await vscode.workspace.getConfiguration('tinker').update('rewardFiles', undefined, vscode.ConfigurationTarget.Workspace);
    await vscode.workspace.getConfiguration('files').update('autoSave', undefined, vscode.ConfigurationTarget.Global);
  });

  const EXAMPLES = '{"completion": "4", "ground_truth": "4", "expected": 1}\n{"completion": "5", "ground_truth": "4", "expected": 0}\n';
  const GOOD = 'def compute_reward(completion, ground_truth):\n    return 1.0 if completion.strip() == ground_truth else 0.0\n';

  /** writes `<name>.py` (and its examples file), opens it, and waits for `expected` */
  async function openWith(name: string, source: string, expected: Expected[]): Promise<vscode.TextDocument> {
    const file = path.join(dir, `${name}.py`);
    fs.writeFileSync(path.join(dir, `${name}.examples.jsonl`), EXAMPLES);
    fs.writeFileSync(file, source);
    const uri = vscode.Uri.file(file);
    const seen = diagnosticsOf(uri, sameAs(expected), `the diagnostics of ${name}.py`);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    assert.deepStrictEqual(brief(await seen), expected);
    return doc;
  }

  async function fixAndClear(doc: vscode.TextDocument, fixed = GOOD): Promise<void> {
    const cleared = diagnosticsOf(doc.uri, none, `the diagnostics of ${path.basename(doc.fileName)} to clear`);
    await replaceText(doc, fixed, true);
    await cleared;
  }

  test('a syntax error is marked at its token, and clears when fixed', async () => {
    const src = 'def compute_reward(completion, ground_truth):\n    return 1 +* 2\n';
    const doc = await openWith('syntax', src, [{ range: rangeOf(src, '*'), severity: E, code: 'syntax', message: 'SyntaxError: invalid syntax' }]);
    await fixAndClear(doc);
  });

  test('a missing function is marked on the first line', async () => {
    const src = 'def compute_rewards(completion, ground_truth):\n    return 1.0\n';
    const doc = await openWith('missing', src, [
      { range: [0, 0, 0, 46], severity: E, code: 'missing-function', message: 'no function compute_reward(completion, ground_truth) is defined at the top level of the file' },
    ]);
    await fixAndClear(doc);
  });

  test('wrong parameters are marked on the function name', async () => {
    const src = 'import re\n\ndef compute_reward(completion):\n    return 1.0\n';
    const doc = await openWith('params', src, [
      {
        range: rangeOf(src, 'compute_reward'),
        severity: E,
        code: 'parameters',
        message: 'compute_reward must take exactly two positional parameters (completion, ground_truth); it is declared as compute_reward(completion)',
      },
    ]);
    await fixAndClear(doc);
  });

  test('an exception on an example is marked on the line the traceback names', async () => {
    const src = 'def compute_reward(completion, ground_truth):\n    return check(completion, ground_truth)\n\ndef check(c, g):\n    return {"4": 1.0}[c]\n';
    const doc = await openWith('raises', src, [
      { range: rangeOf(src, '{"4": 1.0}[c]'), severity: E, code: 'exception', message: "KeyError: '5' (on example raises.examples.jsonl:2)" },
    ]);
    await fixAndClear(doc);
  });

  test('a result that is not a finite number, and one outside [0, 1], are marked on the function name', async () => {
    const src = 'def compute_reward(completion, ground_truth):\n    return float("inf") if completion == "4" else 2.5\n';
    const name = rangeOf(src, 'compute_reward');
    const doc = await openWith('values', src, [
      { range: name, severity: E, code: 'not-finite', message: 'compute_reward returned inf, not a finite number (on example values.examples.jsonl:1)' },
      { range: name, severity: W, code: 'out-of-range', message: 'compute_reward returned 2.5, outside the reward range [0, 1] (on example values.examples.jsonl:2)' },
    ]);
    await fixAndClear(doc);
  });

  test('different results for the same input are marked as non-determinism', async () => {
    const src = 'import random\n\ndef compute_reward(completion, ground_truth):\n    return random.random() / 2\n';
    const file = path.join(dir, 'random.py');
    fs.writeFileSync(path.join(dir, 'random.examples.jsonl'), EXAMPLES);
    fs.writeFileSync(file, src);
    const doc = await vscode.workspace.openTextDocument(file);
    await vscode.window.showTextDocument(doc);
    // the values are random: assert the range, kind and wording, not the numbers
    const ds = await diagnosticsOf(doc.uri, (d) => d.length > 0, 'the non-determinism warning');
    assert.deepStrictEqual(
      brief(ds).map((d) => [d.range, d.severity, d.code]),
      [[rangeOf(src, 'compute_reward'), W, 'nondeterministic']],
    );
    assert.match(ds[0]!.message, /^compute_reward gave different results for the same input: [\d.]+, then [\d.]+; reward functions must be deterministic \(on 2 of 2 examples, first random\.examples\.jsonl:1\)$/);
    await fixAndClear(doc);
  });

  test('a call over the time limit of the spec that names the file is marked on the function name', async () => {
    fs.writeFileSync(path.join(dir, 'train.jsonl'), '{"question": "What is 2 + 2?", "answer": 4}\n');
    const spec = { model: 'tinker-studio/arith-gpt', max_tokens: 4, iterations: 1, dataset: { path: 'train.jsonl' }, reward: { file: 'spin.py', timeout_ms: 1000 } };
    const specFile = path.join(dir, 'spin.grpo.json');
    fs.writeFileSync(specFile, JSON.stringify(spec));
    const src = 'def compute_reward(completion, ground_truth):\n    while completion == "5":\n        pass\n    return 1.0\n';
    await waitFor('the spec to name spin.py', async () => {
      await api.rewards.index.ready();
      return api.rewards.index.info(vscode.Uri.file(path.join(dir, 'spin.py')))?.specFile === specFile;
    }, LIMIT);
    const doc = await openWith('spin', src, [
      { range: rangeOf(src, 'compute_reward'), severity: E, code: 'timeout', message: 'compute_reward took longer than the time limit of 1000 ms; the call was stopped (on example spin.examples.jsonl:2)' },
    ]);
    await fixAndClear(doc, 'def compute_reward(completion, ground_truth):\n    return 1.0 if completion == ground_truth else 0.0\n');
  });

  test('networking and process imports are warnings at the module name', async () => {
    const src = `import socket\nfrom subprocess import run\n\n${GOOD}`;
    const doc = await openWith('network', src, [
      { range: rangeOf(src, 'socket'), severity: W, code: 'network', message: NETWORK('socket') },
      { range: rangeOf(src, 'subprocess'), severity: W, code: 'process', message: 'the module "subprocess" starts other processes: reward functions must not spawn processes' },
    ]);
    await fixAndClear(doc);
  });

  test('unsaved edits are validated while typing, and a mismatch shows on the examples file, the CodeLens and the hover', async () => {
    const doc = await openWith('typing', GOOD, []);
    const lens = async () => {
      const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri);
      return lenses.map((l) => l.command?.title ?? '');
    };
    await waitFor('the CodeLens with the examples result', async () => (await lens()).includes('Test on 2 examples — 2 match, mean 0.50'), LIMIT);

    const examplesUri = vscode.Uri.file(path.join(dir, 'typing.examples.jsonl'));
    const mismatch = diagnosticsOf(examplesUri, (ds) => ds.length === 1, 'the mismatch on the examples file');
    const wrong = 'def compute_reward(completion, ground_truth):\n    return 1.0\n';
    await replaceText(doc, wrong, false); // not saved: the editor's text is what runs
    assert.deepStrictEqual(brief(await mismatch), [{ range: [1, 53, 1, 54], severity: W, code: 'example-mismatch', message: 'expected 0, got 1' }]);
    assert.ok(doc.isDirty, 'the edit is not saved');
    await waitFor('the CodeLens to show the mismatch', async () => (await lens()).includes('Test on 2 examples — 1 match, mean 1.00'), LIMIT);

    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', doc.uri, new vscode.Position(0, 6));
    const text = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
    assert.match(text, /\*\*Test on 2 examples — 1 match, mean 1\.00\*\*/);
    // example cells are code spans: a completion's Markdown never renders
    assert.match(text, /\| `typing\.examples\.jsonl:2` \| `5` \| `4` \| 0 \| 1 ✗ \|/);

    const cleared = diagnosticsOf(examplesUri, none, 'the mismatch to clear');
    await replaceText(doc, GOOD, true);
    await cleared;
  });

  test('rapid edits: a newer edit cancels the validation in flight, and the latest text is what is reported', async () => {
    const doc = await openWith('rapid', GOOD, []);
    // four broken versions typed in quick succession, then one with only a warning
    for (let i = 1; i <= 4; i++) await replaceText(doc, `${GOOD}\ndef broken_${i}(:\n`, false);
    const last = `import socket\n${GOOD}`;
    const settled = diagnosticsOf(doc.uri, sameAs([{ range: rangeOf(last, 'socket'), severity: W, code: 'network', message: NETWORK('socket') }]), 'the latest edit to be reported');
    await replaceText(doc, last, false);
    await settled;
    await waitFor('the validated version to be the latest', () => api.rewards.validator.state(doc.uri)?.version === doc.version, LIMIT);
    assert.strictEqual(api.rewards.validator.state(doc.uri)?.validation?.summary?.matched, 2);
    await fixAndClear(doc);
  });

  test('New Reward Function writes a commented template and its examples, which validate clean', async () => {
    const file = path.join(dir, 'fresh.ts');
    const uri = await vscode.commands.executeCommand<vscode.Uri>('tinker.newRewardFunction', { language: 'typescript', file });
    assert.strictEqual(uri?.fsPath, file);
    assert.match(fs.readFileSync(file, 'utf8'), /export function computeReward\(completion: string, groundTruth: string\): number/);
    assert.ok(fs.existsSync(path.join(dir, 'fresh.examples.jsonl')), 'the examples file is written');
    assert.ok(vscode.workspace.getConfiguration('tinker').inspect<string[]>('rewardFiles')?.workspaceValue?.includes('reward-tests/fresh.ts'), 'the file joins tinker.rewardFiles');
    await waitFor(
      'the template to pass its examples',
      async () => {
        const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri);
        return lenses.some((l) => l.command?.title === 'Test on 3 examples — 3 match, mean 0.33');
      },
      LIMIT,
    );
    assert.deepStrictEqual(vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'Tinker reward'), []);
  });

  test('Dry Run Reward on fresh samples from the spec\'s model (the local engine), G per problem', async () => {
    fs.writeFileSync(path.join(dir, 'fresh-train.jsonl'), ['{"question": "What is 2 + 2?", "answer": 4}', '{"question": "What is 3 + 4?", "answer": 7}', '{"question": "What is 1 + 1?", "answer": 2}'].join('\n') + '\n');
    const spec = {
      backend: 'local',
      model: 'tinker-studio/arith-gpt',
      renderer: 'chatml',
      groups_per_batch: 2,
      group_size: 3,
      max_tokens: 4,
      iterations: 1,
      dataset: { path: 'fresh-train.jsonl' },
      reward: { file: 'model.py' },
    };
    const specFile = path.join(dir, 'model.grpo.json');
    fs.writeFileSync(specFile, JSON.stringify(spec));
    const file = path.join(dir, 'model.py');
    fs.writeFileSync(file, 'def compute_reward(completion, ground_truth):\n    return 1.0 if ground_truth in completion else 0.0\n');
    const uri = vscode.Uri.file(file);
    await waitFor('the spec to name model.py', () => api.rewards.index.info(uri)?.specFile === specFile, LIMIT);
    const report = await vscode.commands.executeCommand<DryRunReport>('tinker.dryRunReward', uri, { fresh: true });
    assert.ok(report, 'the command returns the report');
    assert.strictEqual(report.source, 'model');
    assert.strictEqual(report.origin, 'tinker-studio/arith-gpt');
    assert.strictEqual(report.groups.length, 2, 'groups_per_batch problems');
    assert.ok(report.groups.every((g) => g.rewards.length === 3 && g.rewards.every((r) => r === 0 || r === 1)), 'group_size samples each, scored 0 or 1');
    assert.deepStrictEqual(report.breakdown, groupBreakdown(report.groups.map((g) => g.rewards)));
    assert.strictEqual(report.recorded, undefined);
  });

  test("Dry Run Reward re-scores a run's samples with the edited text and reports the no-signal fractions", async () => {
    const doc = await openWith('dry', GOOD, []);
    const runDir = path.join(api.runs.runsFolder, 'reward-dry-run');
    fs.mkdirSync(path.join(runDir, 'iteration_000000'), { recursive: true });
    fs.writeFileSync(path.join(runDir, 'config.json'), JSON.stringify({ reward: { file: doc.uri.fsPath } }));
    const contents = [['4', '4', 'x', '4'], ['1', '2', '3', '5']];
    const lines = contents.flatMap((group, g) =>
      group.map((content, t) =>
        JSON.stringify({
          group_idx: g,
          traj_idx: t,
          problem_id: `p:${g}`,
          prompt: 'user: what is 2+2?\n',
          completion: content,
          content,
          ground_truth: '4',
          completion_tokens: [],
          logprobs: [],
          reward: 0,
          advantage: 0,
          stop_reason: 'stop',
          termination: 'eos',
        }),
      ),
    );
    fs.writeFileSync(path.join(runDir, 'iteration_000000', 'train_samples.jsonl'), `${lines.join('\n')}\n`);
    // the run's completions join the examples: the first sample of each group ("4" and "1", ground truth "4")
    await replaceText(doc, `# scored on the run's samples too\n${GOOD}`, true);
    await waitFor(
      'the CodeLens to count the run examples',
      async () => {
        const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri);
        return lenses.some((l) => l.command?.title === 'Test on 4 examples — 2 of 2 match, mean 0.50');
      },
      LIMIT,
    );
    assert.strictEqual(api.rewards.validator.state(doc.uri)?.runDir, runDir);
    // unsaved edit: everything containing a digit scores 1
    await replaceText(doc, 'import re\n\ndef compute_reward(completion, ground_truth):\n    return 1.0 if re.search(r"\\d", completion) else 0.0\n', false);
    const report = await vscode.commands.executeCommand<DryRunReport>('tinker.dryRunReward', doc.uri, { runDir });
    assert.ok(report, 'the command returns the report');
    const expected = contents.map((g) => g.map((c) => (/\d/.test(c) ? 1 : 0)));
    assert.deepStrictEqual(report.groups.map((g) => g.rewards), expected);
    assert.deepStrictEqual(report.breakdown, groupBreakdown(expected));
    assert.deepStrictEqual(report.breakdown, { frac_mixed: 0.5, frac_all_good: 0.5, frac_all_bad: 0 });
    assert.strictEqual(report.recorded?.changed, 7);
    const shown = await waitFor('the report document', () => vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'tinker-reward-report' && d.getText().includes('# Dry run of dry.py')), LIMIT);
    assert.match(shown.getText(), /\| mixed \| 50\.0% \|/);
    await replaceText(doc, GOOD, true);
  });
});
