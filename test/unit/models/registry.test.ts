// The registry file: registering from a run folder (its final checkpoint, the SFT → GRPO recipe
// followed through load_checkpoint_path, the data files with lines and sha256), MODELS.md with every
// field, statuses, the file's errors, and two processes writing at once losing nothing.
import * as assert from 'assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { registerFromPath, registerFromRun, setExpiry, setStatus } from '../../../src/core/models/lifecycle';
import { recordExport } from '../../../src/core/models/exports';
import { renderModelsMd } from '../../../src/core/models/markdown';
import { readRegistry, updateRegistry } from '../../../src/core/models/store';
import { sftThenGrpo, sha256 } from './modelFixtures';

const by = { os_user: 'tester', git_user: 'Test Er' };

function finished(child: ReturnType<typeof spawn>): Promise<{ code: number | null; out: string }> {
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}

describe('model registry: the file and MODELS.md', () => {
  let dir: string;
  let reg: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-registry-'));
    reg = path.join(dir, 'tinker-models.json');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('registers a run folder\'s final checkpoint with the recipe SFT → GRPO and the data it read', async () => {
    const { grpoDir, chats, problems } = sftThenGrpo(dir);
    const v = await registerFromRun(reg, { name: 'arith', runDir: grpoDir, by });
    assert.strictEqual(v.id, 'arith@v1');
    assert.strictEqual(v.sampler_path, 'tinker://grpo-run/sampler_weights/final');
    assert.strictEqual(v.state_path, 'tinker://grpo-run/weights/final');
    assert.strictEqual(v.base_model, 'tinker-studio/arith-gpt');
    assert.strictEqual(v.renderer, 'chatml');
    assert.strictEqual(v.lora_rank, 8);
    assert.strictEqual(v.source_run, 'runs/format-grpo');
    assert.deepStrictEqual(
      v.recipe.map((r) => [r.kind, r.run_dir, r.learning_rate, r.steps, r.planned, r.load_checkpoint_path, r.checkpoint]),
      [
        ['sft', 'runs/format-sft', 0.004, 48, 'max_steps 48', undefined, 'tinker://sft-run/weights/final'],
        ['grpo', 'runs/format-grpo', 0.001, 21, 'iterations 21', 'tinker://sft-run/weights/final', 'tinker://grpo-run/weights/final'],
      ],
    );
    assert.deepStrictEqual(
      v.data.map((d) => [d.file, d.used_as, d.lines, d.sha256]),
      [
        ['specs/chats.jsonl', 'sft dataset.path', 3, sha256(fs.readFileSync(chats))],
        ['specs/train.jsonl', 'grpo dataset.path', 2, sha256(fs.readFileSync(problems))],
        ['specs/train.jsonl', 'grpo dataset.holdout.path', 2, sha256(fs.readFileSync(problems))],
      ],
    );
    assert.deepStrictEqual(v.history, [{ status: 'candidate', at: v.history[0]!.at, by, reason: `registered from ${'runs/format-grpo'} (checkpoint final)` }]);
    // the same checkpoint twice is one version
    await assert.rejects(registerFromRun(reg, { name: 'arith', runDir: grpoDir, by }), /tinker:\/\/grpo-run\/sampler_weights\/final is already registered as arith@v1/);
    // a named checkpoint of the run is the next version
    const v2 = await registerFromRun(reg, { name: 'arith', runDir: grpoDir, checkpoint: '000010', by });
    assert.strictEqual(v2.id, 'arith@v2');
    await assert.rejects(registerFromRun(reg, { name: 'arith', runDir: grpoDir, checkpoint: 'nope', by }), /has no checkpoint named "nope" \(it has: 000010, final\)/);
  });

  it('MODELS.md shows every field per version, newest first, regenerated on each write and deterministic', async () => {
    const { grpoDir } = sftThenGrpo(dir);
    await registerFromRun(reg, { name: 'arith', runDir: grpoDir, by });
    await registerFromPath(reg, { name: 'arith', samplerPath: 'tinker://other/sampler_weights/final', baseModel: 'tinker-studio/arith-gpt', renderer: 'chatml', loraRank: 4, by });
    await updateRegistry(reg, (r) => {
      const v = r.versions[0]!;
      v.status = 'production';
      v.history.push({ status: 'production', at: '2026-11-28T12:00:00.000Z', by, reason: 'first ship', gate: ['acc: no production model to compare with'] });
      v.suite_results.push({ suite: { name: 'arith', version: 'abcdef012345', file: 'examples/suite/arith.suite.json' }, checkpoint: v.sampler_path!, complete: true, at: '2026-11-28T11:00:00.000Z', entries: [{ name: 'holdout', layer: 'product', metric: 'pass@1', goal: 'maximize', estimate: { value: 0.72, lo: 0.65, hi: 0.79 }, n: 200 }] });
    });
    await setExpiry(reg, 'arith@v1', '2026-12-05T00:00:00.000Z');
    const md = fs.readFileSync(path.join(dir, 'MODELS.md'), 'utf8');
    assert.ok(md.indexOf('### arith@v2 — candidate') < md.indexOf('### arith@v1 — production'), 'newest first');
    for (const want of [
      '| arith | v2 | — | v1 | — |',
      '| Sampler path | `tinker://grpo-run/sampler_weights/final` |',
      '| State path | `tinker://grpo-run/weights/final` |',
      '| Base model | `tinker-studio/arith-gpt` |',
      '| Renderer | chatml |',
      '| LoRA rank | 8 |',
      '| Checkpoint expiry | 2026-12-05T00:00:00.000Z |',
      '> **Warning:** the production checkpoint expires at 2026-12-05T00:00:00.000Z: clear its TTL (tinker-studio checkpoints ttl tinker://grpo-run/weights/final tinker://grpo-run/sampler_weights/final --clear)',
      `| 1 | sft | \`${'runs/format-sft'}\` | 0.004 (cosine) | 48 | max_steps 48 | base model | \`tinker://sft-run/weights/final\` |`,
      `| 2 | grpo | \`${'runs/format-grpo'}\` | 0.001 | 21 | iterations 21 | \`tinker://sft-run/weights/final\` | \`tinker://grpo-run/weights/final\` |`,
      'Chain: SFT → GRPO',
      `| \`${'specs/chats.jsonl'}\` | sft dataset.path | 3 | \``,
      'Suite `arith` version `abcdef012345` (`examples/suite/arith.suite.json`), result of 2026-11-28T11:00:00.000Z:',
      '| holdout | product | pass@1 (higher is better) | 0.72 [0.65, 0.79] | 200 |',
      '→ **production** by Test Er (tester) — reason: first ship',
      '  - acc: no production model to compare with',
      'Not known (registered from a tinker:// path).',
    ])
      assert.ok(md.includes(want), `MODELS.md lacks ${JSON.stringify(want)}:\n${md}`);
    assert.strictEqual(renderModelsMd(await readRegistry(reg)), md, 'the same registry renders the same text');
  });

  it("lists a version's exports and publishes in MODELS.md, oldest first (none: no section)", async () => {
    await registerFromPath(reg, { name: 'm', samplerPath: 'tinker://a/sampler_weights/final', baseModel: 'Qwen/Qwen3-8B', by });
    const md = () => fs.readFileSync(path.join(dir, 'MODELS.md'), 'utf8');
    assert.ok(!md().includes('Exports and publishes'), 'no section before anything was exported');
    const sha = 'a'.repeat(64);
    await recordExport(reg, 'm@v1', { folder: path.join(dir, 'exports', 'm-v1-adapter'), sha256: sha }, new Date('2026-11-28T10:00:00Z'));
    await recordExport(reg, 'tinker://a/sampler_weights/final', { sha256: 'b'.repeat(64), hubUrl: 'https://huggingface.co/alice/m-lora', private: true, commit: 'c0ffee' }, new Date('2026-11-28T11:00:00Z'));
    assert.strictEqual(await recordExport(reg, 'tinker://elsewhere/sampler_weights/final', { sha256: sha }), undefined, 'a checkpoint the registry does not hold records nothing');
    const text = md();
    const rows = text.split('\n').filter((l) => l.startsWith('| 2026-11-28T1'));
    assert.deepStrictEqual(rows, [
      `| 2026-11-28T10:00:00.000Z | \`exports/m-v1-adapter\` | — | \`${sha}\` |`,
      `| 2026-11-28T11:00:00.000Z | temporary (not kept) | https://huggingface.co/alice/m-lora (private) at \`c0ffee\` | \`${'b'.repeat(64)}\` |`,
    ]);
    assert.ok(text.indexOf('**Exports and publishes**') < text.indexOf('**History**'));
  });

  it('moves versions between statuses with the history of who and why', async () => {
    await registerFromPath(reg, { name: 'm', samplerPath: 'tinker://a/sampler_weights/final', baseModel: 'b', by });
    await setStatus(reg, 'm@v1', 'staging', { reason: 'canary', by });
    await assert.rejects(setStatus(reg, 'm@v1', 'staging', { by }), /m@v1 is already staging/);
    const v = await setStatus(reg, 'm', 'retired', { reason: 'superseded', by });
    assert.deepStrictEqual(
      v.history.map((h) => [h.status, h.reason]),
      [
        ['candidate', 'registered from a tinker:// path'],
        ['staging', 'canary'],
        ['retired', 'superseded'],
      ],
    );
    await assert.rejects(setStatus(reg, 'm@v7', 'retired', { by }), /no model version "m@v7" in the registry \(it has: m@v1\)/);
  });

  it('a broken registry file is named with its field, and nothing is written over it', async () => {
    fs.writeFileSync(reg, JSON.stringify({ kind: 'tinker-model-registry', version: 1, versions: [{ id: 'x' }] }));
    await assert.rejects(registerFromPath(reg, { name: 'm', samplerPath: 'tinker://a/sampler_weights/final', baseModel: 'b', by }), (e: Error) => e.message.includes('tinker-models.json') && /versions\[0\]|versions\.0/.test(e.message));
    assert.strictEqual(JSON.parse(fs.readFileSync(reg, 'utf8')).versions[0].id, 'x');
    assert.ok(!fs.existsSync(`${reg}.lock`), 'the lock is let go after a failure');
  });

  it('two processes registering at once lose nothing, and a lock left by a dead process is taken over', async () => {
    const lifecycle = require.resolve('../../../src/core/models/lifecycle');
    const n = 12;
    const child = (who: string) =>
      spawn(process.execPath, [
        '-e',
        `const { registerFromPath } = require(${JSON.stringify(lifecycle)});
         (async () => {
           for (let i = 0; i < ${n}; i++)
             await registerFromPath(${JSON.stringify(reg)}, { name: 'm', samplerPath: 'tinker://${who}-' + i + '/sampler_weights/final', baseModel: 'b', by: { os_user: '${who}' } });
         })().catch((e) => { console.error(e); process.exit(1); });`,
      ]);
    // a lock whose writer died: the children take it over
    const gone = spawn(process.execPath, ['-e', '0']);
    await finished(gone);
    fs.writeFileSync(`${reg}.lock`, JSON.stringify({ pid: gone.pid, host: os.hostname(), since: '2026-01-01T00:00:00.000Z' }));
    const [a, b] = await Promise.all([finished(child('a')), finished(child('b'))]);
    assert.strictEqual(a.code, 0, a.out);
    assert.strictEqual(b.code, 0, b.out);
    const r = await readRegistry(reg);
    assert.deepStrictEqual(
      r.versions.map((v) => v.version).sort((x, y) => x - y),
      Array.from({ length: 2 * n }, (_, i) => i + 1),
    );
    const paths = r.versions.map((v) => v.sampler_path).sort();
    assert.deepStrictEqual(paths, [...Array.from({ length: n }, (_, i) => `tinker://a-${i}/sampler_weights/final`), ...Array.from({ length: n }, (_, i) => `tinker://b-${i}/sampler_weights/final`)].sort());
    assert.strictEqual((fs.readFileSync(path.join(dir, 'MODELS.md'), 'utf8').match(/^### m@v\d+ — candidate$/gm) ?? []).length, 2 * n);
    assert.ok(!fs.existsSync(`${reg}.lock`));
  });
});
