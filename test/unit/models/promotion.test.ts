// The promotion gate on crafted suite results: each gate rule (non-inferiority paired on the same
// items, floor, ceiling), missing and stale results (suite version, data file, incomplete, checkpoint),
// Promote Anyway needing a written reason and keeping it, and the production version it replaces.
import * as assert from 'assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { registerFromPath, setGateSuite } from '../../../src/core/models/lifecycle';
import { checkPromotion, promote, PromotionRefusedError } from '../../../src/core/models/promotion';
import { readRegistry } from '../../../src/core/models/store';
import { bits, writeResult, writeSuite } from './modelFixtures';

const by = { os_user: 'tester', git_user: 'Test Er' };
const opts = { resamples: 400, seed: 1, by };

describe('model registry: the promotion gate', () => {
  let dir: string;
  let reg: string;
  let suite: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-registry-gate-'));
    reg = path.join(dir, 'tinker-models.json');
    suite = writeSuite(path.join(dir, 'suite'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const register = (n: number) => registerFromPath(reg, { name: 'arith', samplerPath: `tinker://run-${n}/sampler_weights/final`, statePath: `tinker://run-${n}/weights/final`, baseModel: 'tinker-studio/arith-gpt', by });

  /** v1 in production (acc 0.7 over 100 items, nll 1), v2 registered. */
  async function withProduction(): Promise<void> {
    await setGateSuite(reg, suite);
    await register(1);
    await writeResult(suite, 'tinker://run-1/sampler_weights/final', { acc: bits(100, 70), nll: Array(100).fill(1) });
    await promote(reg, 'arith@v1', opts);
    await register(2);
  }

  it('promotes the first version on its floors and ceilings alone, and refuses without a gate suite', async () => {
    await register(1);
    await assert.rejects(promote(reg, 'arith@v1', opts), (e: Error) => e instanceof PromotionRefusedError && /names no gate suite/.test(e.message));
    await setGateSuite(reg, suite);
    await writeResult(suite, 'tinker://run-1/sampler_weights/final', { acc: bits(100, 70), nll: Array(100).fill(1) });
    const out = await promote(reg, 'arith@v1', opts);
    assert.strictEqual(out.version.status, 'production');
    assert.ok(out.check.passes.some((p) => /no production model to compare with/.test(p)));
    assert.ok(out.check.passes.some((p) => /nll: nll 1 ≤ 5 \(ceiling\)/.test(p)), out.check.passes.join('\n'));
    const r = await readRegistry(reg);
    assert.strictEqual(r.gate_suite, path.join('suite', 'gate.suite.json'));
    assert.strictEqual(r.versions[0]!.suite_results[0]!.entries.find((e) => e.name === 'acc')!.n, 100);
  });

  it('promotes a better version paired on the same items and retires the one it replaces', async () => {
    await withProduction();
    await writeResult(suite, 'tinker://run-2/sampler_weights/final', { acc: bits(100, 80), nll: Array(100).fill(0.9) });
    const out = await promote(reg, 'arith@v2', opts);
    assert.strictEqual(out.replaced?.id, 'arith@v1');
    const acc = out.check.verdicts.find((v) => v.entry === 'acc')!;
    assert.strictEqual(acc.paired_items, 100);
    assert.ok(acc.diff!.value > 0.09 && acc.diff!.value < 0.11, `paired difference ${acc.diff!.value}`);
    const r = await readRegistry(reg);
    assert.deepStrictEqual(
      r.versions.map((v) => [v.id, v.status]),
      [
        ['arith@v1', 'retired'],
        ['arith@v2', 'production'],
      ],
    );
    assert.strictEqual(r.versions[0]!.history.at(-1)!.reason, 'replaced in production by arith@v2');
  });

  it('refuses a worse version with the paired numbers, and a failed floor and ceiling, all in one message', async () => {
    await setGateSuite(reg, writeSuite(path.join(dir, 'suite'), { acc: { non_inferiority: 0.02, min: 0.6 }, nll: { max: 1.5 } }));
    await register(1);
    await writeResult(suite, 'tinker://run-1/sampler_weights/final', { acc: bits(100, 70), nll: Array(100).fill(1) });
    await promote(reg, 'arith@v1', opts);
    await register(2);
    await writeResult(suite, 'tinker://run-2/sampler_weights/final', { acc: bits(100, 40), nll: Array(100).fill(2) });
    await assert.rejects(promote(reg, 'arith@v2', opts), (e: Error) => {
      assert.ok(e instanceof PromotionRefusedError, e.message);
      assert.match(e.message, /promotion of arith@v2 to production refused on suite gate version [0-9a-f]{12} against production arith@v1/);
      assert.match(e.message, /acc: pass@1 0\.4 \[0\.35, 0\.45\] vs production 0\.7 \[0\.65, 0\.75\]; paired difference -0\.3 \[[-0-9.]+, [-0-9.]+\] over 100 items \(higher is better\), lower bound -0\.[34]\d* < −0\.02/);
      assert.match(e.message, /acc: pass@1 0\.4 < 0\.6 \(floor\)/);
      assert.match(e.message, /nll: nll 2 > 1\.5 \(ceiling\)/);
      assert.match(e.message, /--anyway "<reason>"/);
      return true;
    });
    const r = await readRegistry(reg);
    assert.strictEqual(r.versions.find((v) => v.id === 'arith@v2')!.status, 'candidate', 'a refusal changes nothing');
  });

  it('refuses on a missing candidate result, a missing production result, and names both', async () => {
    await withProduction();
    fs.rmSync(path.join(dir, 'suite', 'suites'), { recursive: true });
    const c = await checkPromotion(reg, 'arith@v2', opts);
    assert.deepStrictEqual(
      c.refusals.map((r) => r.replace(/version [0-9a-f]{12}/, 'version X')),
      ['candidate arith@v2: no result of suite gate (version X) for tinker://run-2/sampler_weights/final', 'production arith@v1: no result of suite gate (version X) for tinker://run-1/sampler_weights/final'],
    );
    assert.deepStrictEqual(c.verdicts, [], 'no verdict without both results');
  });

  it('refuses on stale results: the suite changed, a data file changed, an unfinished run, an entry missing', async () => {
    await withProduction();
    await writeResult(suite, 'tinker://run-2/sampler_weights/final', { acc: bits(100, 80), nll: Array(100).fill(0.9), complete: false, dropEntry: 'nll' });
    let c = await checkPromotion(reg, 'arith@v2', opts);
    assert.ok(c.refusals.includes('candidate arith@v2: the suite run did not finish'), c.refusals.join('\n'));
    assert.ok(c.refusals.includes('candidate arith@v2: nll: no result'), c.refusals.join('\n'));

    await writeResult(suite, 'tinker://run-2/sampler_weights/final', { acc: bits(100, 80), nll: Array(100).fill(0.9) });
    fs.appendFileSync(path.join(dir, 'suite', 'data.jsonl'), '{"q":3}\n');
    c = await checkPromotion(reg, 'arith@v2', opts);
    assert.ok(c.refusals.some((r) => /^candidate arith@v2: acc: data\.jsonl changed since the result \(sha256 [0-9a-f]{12}… → [0-9a-f]{12}…\)$/.test(r)), c.refusals.join('\n'));
    assert.ok(c.refusals.some((r) => /^production arith@v1: acc: data\.jsonl changed/.test(r)), c.refusals.join('\n'));

    // the suite itself changed: its version moves on, the stored results are of the old one
    const value = JSON.parse(fs.readFileSync(suite, 'utf8'));
    value.entries[0].gate.non_inferiority = 0.05;
    fs.writeFileSync(suite, JSON.stringify(value));
    c = await checkPromotion(reg, 'arith@v2', opts);
    assert.strictEqual(c.refusals.filter((r) => /no result of suite gate \(version [0-9a-f]{12}\)/.test(r)).length, 2, c.refusals.join('\n'));
    await assert.rejects(promote(reg, 'arith@v2', opts), PromotionRefusedError);
  });

  it('Promote Anyway needs a written reason, and the history and MODELS.md keep it with the refusals', async () => {
    await withProduction();
    await writeResult(suite, 'tinker://run-2/sampler_weights/final', { acc: bits(100, 40), nll: Array(100).fill(1) });
    await assert.rejects(promote(reg, 'arith@v2', { ...opts, anyway: '   ' }), /needs a written reason/);
    const out = await promote(reg, 'arith@v2', { ...opts, anyway: 'hotfix for the tokenizer bug; accuracy recovers in v3' });
    const last = out.version.history.at(-1)!;
    assert.strictEqual(last.anyway, true);
    assert.strictEqual(last.reason, 'hotfix for the tokenizer bug; accuracy recovers in v3');
    assert.deepStrictEqual(last.by, by);
    assert.ok(last.gate!.some((g) => /acc: pass@1 0\.4 .* lower bound .* < −0\.02/.test(g)), last.gate!.join('\n'));
    const md = fs.readFileSync(path.join(dir, 'MODELS.md'), 'utf8');
    assert.match(md, /→ \*\*production\*\* by Test Er \(tester\) — \*\*promoted anyway\*\*; reason: hotfix for the tokenizer bug; accuracy recovers in v3/);
    assert.match(md, / {2}- acc: pass@1 0\.4 \[0\.35, 0\.45\] vs production 0\.7/);
  });

  it('refuses to promote the production version again', async () => {
    await withProduction();
    await assert.rejects(promote(reg, 'arith@v1', opts), /arith@v1 is already in production/);
  });
});
