// `tinker-studio mcp` as an agent meets it: the official MCP client over stdio against the real CLI,
// which starts its own embedded engine. init_grpo on the arithmetic example (small overrides) →
// train_grpo_step ×2 → sample → save → load → finish, with the reports' structured content checked
// against the run directory; a call made while a step runs is answered "busy"; a bad spec field, a
// missing reward file and an unknown checkpoint get errors that say what is wrong.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mergeMetrics, parseRecords, CheckpointRecord, MetricsRecord } from '../../../src/core/runs/runDirectory';
import { AGENT_TOOLS } from '../../../src/core/agent/tools';

const CLI = path.join(__dirname, '../../../src/cli/main.js');
const EXAMPLE = path.resolve(__dirname, '../../../../examples/arithmetic/arith.grpo.json');
const SFT_EXAMPLE = path.resolve(__dirname, '../../../../examples/sft-arithmetic/arith.sft.json');
const DPO_PAIRS = path.resolve(__dirname, '../../../../examples/dpo-arithmetic/pairs.jsonl');

interface CallResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
}

const textOf = (r: CallResult) => r.content.map((c) => c.text ?? '').join('\n');

describe('agent tools over MCP (tinker-studio mcp, local engine)', function () {
  this.timeout(300_000);
  let tmp: string;
  let client: Client;
  let stderr = '';

  const call = async (name: string, args: Record<string, unknown> = {}): Promise<CallResult> => (await client.callTool({ name, arguments: args }, undefined, { timeout: 240_000 })) as CallResult;
  const ok = async (name: string, args: Record<string, unknown> = {}): Promise<CallResult> => {
    const r = await call(name, args);
    assert.ok(!r.isError, `${name} failed: ${textOf(r)}\n--- server stderr ---\n${stderr}`);
    return r;
  };

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-mcp-'));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--backend', 'local', '--workspace', path.dirname(EXAMPLE), '--runs-dir', path.join(tmp, 'runs'), '--cache-dir', path.join(tmp, 'cache'), '--busy-wait-ms', '300'],
      env: { ...(process.env as Record<string, string>), TINKER_API_KEY: '' },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    client = new Client({ name: 'tinker-studio-test', version: '0.0.0' });
    await client.connect(transport);
  });

  after(async () => {
    await client?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('lists the tools, the doctrine prompt and resource', async () => {
    const tools = await client.listTools();
    assert.deepStrictEqual(tools.tools.map((t) => t.name).sort(), AGENT_TOOLS.map((t) => t.name).sort());
    const train = tools.tools.find((t) => t.name === 'train_grpo_step')!;
    assert.ok(train.inputSchema.properties && 'num_iterations' in train.inputSchema.properties);
    const prompts = await client.listPrompts();
    assert.deepStrictEqual(prompts.prompts.map((p) => p.name), ['training_doctrine']);
    const res = await client.readResource({ uri: 'tinker-studio://doctrine' });
    assert.match(String((res.contents[0] as { text?: string }).text), /ALL-0/);
  });

  it('refuses a bad spec field and a missing reward file with what to change', async () => {
    const bad = await call('init_grpo', { spec_file: 'arith.grpo.json', overrides: { group_size: 0 } });
    assert.ok(bad.isError);
    assert.match(textOf(bad), /arith\.grpo\.json: group_size/);
    const missing = await call('init_grpo', { spec_file: 'arith.grpo.json', overrides: { reward: { file: 'no-such-reward.py' } } });
    assert.ok(missing.isError);
    assert.match(textOf(missing), /reward\.file: file "no-such-reward\.py" not found/);
    const before = await ok('status');
    assert.strictEqual(before.structuredContent?.state, 'idle');
    assert.strictEqual(before.structuredContent?.run_name, undefined, 'a refused init leaves no session');
  });

  it('refuses an unknown or misspelt argument, naming it and the accepted ones; its schema says so', async () => {
    const tools = await client.listTools();
    for (const t of tools.tools) assert.strictEqual((t.inputSchema as { additionalProperties?: unknown }).additionalProperties, false, t.name);
    const bogus = await call('evaluate', { spec_file: 'holdout.eval.json', bogus: 1 });
    assert.ok(bogus.isError, textOf(bogus));
    assert.match(textOf(bogus), /evaluate: unknown argument "bogus"; it accepts spec_file, targets, benchmark, dataset, grader, n, max_problems, max_tokens, temperature, backend/);
    const misspelt = await call('train_grpo_step', { num_iteration: 2 });
    assert.ok(misspelt.isError);
    assert.match(textOf(misspelt), /train_grpo_step: unknown argument "num_iteration" \(did you mean "num_iterations"\?\)/);
    const limit = await call('evaluate', { spec_file: 'holdout.eval.json', limit: -3 });
    assert.ok(limit.isError);
    assert.match(textOf(limit), /unknown argument "limit"/);
    assert.ok(!fs.existsSync(path.join(path.dirname(EXAMPLE), 'evals')), 'no eval started');
  });

  it('answers a value out of range, a wrong type, a missing argument and an unknown eval in the project\'s words, not the SDK\'s', async () => {
    const range = await call('evaluate', { targets: ['tinker-studio/arith-gpt'], dataset: 'holdout.jsonl', grader: 'reward.py', max_problems: -3 });
    assert.ok(range.isError);
    assert.strictEqual(textOf(range), 'evaluate: max_problems: must be at least 1 (got -3)');
    const type = await call('train_grpo_step', { num_iterations: 'two' });
    assert.ok(type.isError);
    assert.strictEqual(textOf(type), 'train_grpo_step: num_iterations: must be a number, not "two"');
    const missing = await call('eval_status', {});
    assert.ok(missing.isError);
    assert.strictEqual(textOf(missing), 'eval_status: results: is required');
    const unknown = await call('eval_status', { results: 'no-such-eval' });
    assert.ok(unknown.isError, textOf(unknown));
    assert.match(textOf(unknown), /^eval_status: no eval "no-such-eval": no results folder at .*no-such-eval, and no eval of this session by that name/);
    assert.ok(!fs.existsSync(path.join(path.dirname(EXAMPLE), 'evals')), 'no eval started');
  });

  it('trains step by step, samples, saves, loads and finishes one ordinary run directory', async () => {
    const init = await ok('init_grpo', {
      spec_file: 'arith.grpo.json',
      overrides: { name: 'agent-arith', groups_per_batch: 4, group_size: 4, iterations: 10, eval_every: 0, save_every: 0 },
    });
    assert.strictEqual(init.structuredContent?.run_name, 'agent-arith');
    assert.ok(Number(init.structuredContent?.train_problems) > 0);

    // a second call while the first step runs waits 300 ms, then is answered busy with the status
    const first = call('train_grpo_step', { num_iterations: 2 });
    for (;;) {
      const s = await ok('status');
      if (s.structuredContent?.state === 'running') break;
    }
    const busy = await call('save', { name: 'too-early' });
    assert.ok(busy.isError, 'a call during a step must not run');
    assert.strictEqual(busy.structuredContent?.busy, true);
    assert.strictEqual((busy.structuredContent?.status as { tool?: string }).tool, 'train_grpo_step');
    assert.match(textOf(busy), /busy: train_grpo_step is still running/);

    const r1 = await first;
    assert.ok(!r1.isError, textOf(r1) + stderr);
    const rep1 = r1.structuredContent!;
    assert.strictEqual(rep1.first_step, 0);
    assert.strictEqual(rep1.last_step, 1);
    assert.strictEqual(rep1.steps_done, 2);
    const groups = rep1.groups as { total: number; mixed: number; all_good: number; all_bad: number };
    assert.strictEqual(groups.total, 4);
    assert.strictEqual(groups.mixed + groups.all_good + groups.all_bad, 4);
    const runDir = String(rep1.run_dir);
    assert.match(textOf(r1), /groups: \d+ mixed, \d+ all-good \(ALL-1\), \d+ all-bad \(ALL-0\) of 4/);
    assert.ok(textOf(r1).includes(`run directory: ${runDir}`));

    const r2 = await ok('train_grpo_step', {});
    assert.strictEqual(r2.structuredContent?.first_step, 2);
    assert.strictEqual(r2.structuredContent?.last_step, 2);

    const sampled = await ok('sample', { prompts: [{ prompt: 'What is 2 + 3?', ground_truth: '5' }, { prompt: 'What is 7 + 1?' }], n: 3 });
    const results = sampled.structuredContent!.results as Array<{ ground_truth: string | null; completions: Array<{ text: string; reward: number | null }> }>;
    assert.strictEqual(results.length, 2);
    assert.strictEqual(results[0]!.completions.length, 3);
    for (const c of results[0]!.completions) assert.ok(c.reward === 0 || c.reward === 1, `reward ${c.reward}`);
    for (const c of results[1]!.completions) assert.strictEqual(c.reward, null, 'no ground truth, no reward');
    assert.strictEqual(sampled.structuredContent!.source, 'current weights after 3 iterations', 'samples come from the live trained weights');

    const saved = await ok('save', { name: 'after-3' });
    const statePath = String(saved.structuredContent?.state_path);
    assert.match(statePath, /^tinker:\/\//);
    assert.match(String(saved.structuredContent?.sampler_path), /^tinker:\/\//);

    const unknown = await call('load', { path: 'tinker://no-such-model/weights/nothing' });
    assert.ok(unknown.isError);
    assert.match(textOf(unknown), /unknown checkpoint tinker:\/\/no-such-model\/weights\/nothing/);
    const loaded = await ok('load', { path: statePath });
    assert.strictEqual(loaded.structuredContent?.step, 3);

    const fin = await ok('finish');
    assert.strictEqual(fin.structuredContent?.steps, 3);
    assert.match(String((fin.structuredContent?.final as { sampler_path?: string }).sampler_path), /^tinker:\/\//);

    // the run directory is an ordinary one: every step once, in order; only the checkpoints asked for
    // (save_every 0: none between calls), the load point, and final
    const metricsFile = path.join(runDir, 'metrics.jsonl');
    const metrics = mergeMetrics(parseRecords(fs.readFileSync(metricsFile, 'utf8'), metricsFile, MetricsRecord).records);
    assert.deepStrictEqual(metrics.map((m) => m.step), [0, 1, 2]);
    const ckFile = path.join(runDir, 'checkpoints.jsonl');
    const cks = parseRecords(fs.readFileSync(ckFile, 'utf8'), ckFile, CheckpointRecord).records;
    assert.deepStrictEqual(
      cks.map((c) => [c.name, c.batch]),
      [
        ['after-3', 3],
        ['load-000003', 3],
        ['final', 3],
      ],
    );
    const after = await ok('status');
    assert.strictEqual(after.structuredContent?.run_name, undefined, 'finish ends the session');
  });

  it('trains SFT step by step: init_sft → train_sft_step ×2 → finish, and refuses the GRPO step on it', async () => {
    const init = await ok('init_sft', { spec_file: SFT_EXAMPLE, overrides: { name: 'agent-sft', batch_size: 8, max_steps: 10, eval_every: 1, save_every: 0 } });
    assert.strictEqual(init.structuredContent?.run_name, 'agent-sft');
    assert.ok(Number(init.structuredContent?.train_chats) > 0 && Number(init.structuredContent?.validation_chats) > 0);
    const wrong = await call('train_grpo_step', {});
    assert.ok(wrong.isError);
    assert.match(textOf(wrong), /the session is an SFT run: call train_sft_step/);
    const s1 = await ok('train_sft_step', { num_steps: 2 });
    assert.strictEqual(s1.structuredContent?.first_step, 0);
    assert.strictEqual(s1.structuredContent?.last_step, 1);
    assert.ok(Number(s1.structuredContent?.train_mean_nll) > 0);
    assert.ok(Number(s1.structuredContent?.test_nll) > 0, 'validation NLL measured (eval_every 1)');
    assert.match(textOf(s1), /^steps 0–1 done \(2 so far\)/);
    const s2 = await ok('train_sft_step', {});
    assert.strictEqual(s2.structuredContent?.first_step, 2);
    const runDir = String(s2.structuredContent?.run_dir);
    const fin = await ok('finish');
    assert.strictEqual(fin.structuredContent?.steps, 3);
    const metricsFile = path.join(runDir, 'metrics.jsonl');
    assert.deepStrictEqual(
      mergeMetrics(parseRecords(fs.readFileSync(metricsFile, 'utf8'), metricsFile, MetricsRecord).records).map((m) => m.step),
      [0, 1, 2],
    );
    const ckFile = path.join(runDir, 'checkpoints.jsonl');
    assert.deepStrictEqual(
      parseRecords(fs.readFileSync(ckFile, 'utf8'), ckFile, CheckpointRecord).records.map((c) => [c.name, c.batch]),
      [['final', 3]],
    );
  });
  it('trains DPO step by step: init_dpo → train_dpo_step ×2 → finish against the step-0 reference, and refuses the other kinds\' steps on it', async () => {
    // 48 of the example's pairs, a quarter kept for validation
    const dir = path.join(tmp, 'dpo');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'pairs.jsonl'), fs.readFileSync(DPO_PAIRS, 'utf8').split('\n').slice(0, 48).join('\n') + '\n');
    const spec = { backend: 'local', model: 'tinker-studio/arith-gpt', renderer: 'chatml', lora_rank: 8, learning_rate: 2e-3, dpo_beta: 0.1, batch_size: 12, max_steps: 10, eval_every: 1, save_every: 0, seed: 0, dataset: { path: 'pairs.jsonl', validation: { fraction: 0.25 } } };
    const specFile = path.join(dir, 'agent.dpo.json');
    fs.writeFileSync(specFile, JSON.stringify(spec, null, 2));
    const init = await ok('init_dpo', { spec_file: specFile, overrides: { name: 'agent-dpo' } });
    assert.strictEqual(init.structuredContent?.run_name, 'agent-dpo');
    assert.strictEqual(init.structuredContent?.train_pairs, 36);
    assert.strictEqual(init.structuredContent?.validation_pairs, 12);
    assert.match(String(init.structuredContent?.reference), /^tinker:\/\//, 'the reference sampler is saved before the first step');
    for (const [tool, args] of [['train_grpo_step', {}], ['train_sft_step', {}]] as const) {
      const wrong = await call(tool, args);
      assert.ok(wrong.isError);
      assert.match(textOf(wrong), /the session is a DPO run: call train_dpo_step/);
    }
    const s1 = await ok('train_dpo_step', { num_steps: 2 });
    assert.strictEqual(s1.structuredContent?.first_step, 0);
    assert.strictEqual(s1.structuredContent?.last_step, 1);
    assert.match(textOf(s1), /^steps 0–1 done \(2\/10\)/);
    assert.match(textOf(s1), /dpo_loss \d\.\d{3} .*pair accuracy \d\.\d{3}, margin [+-]\d/);
    assert.ok(Number.isFinite(Number(s1.structuredContent?.test_accuracy)), 'validation measured (eval_every 1)');
    const runDir = String(s1.structuredContent?.run_dir);
    const metricsFile = path.join(runDir, 'metrics.jsonl');
    const rows = mergeMetrics(parseRecords(fs.readFileSync(metricsFile, 'utf8'), metricsFile, MetricsRecord).records);
    // the report is the run directory's last row
    assert.strictEqual(s1.structuredContent?.dpo_loss, rows[1]!.dpo_loss);
    assert.strictEqual(s1.structuredContent?.margin, rows[1]!.margin);
    // step 0 is computed at the reference's weights: every log-ratio is 0, so the loss is log 2
    assert.ok(Math.abs(Number(rows[0]!.dpo_loss) - Math.LN2) < 1e-6, `step 0 dpo_loss ${rows[0]!.dpo_loss}`);
    const s2 = await ok('train_dpo_step', {});
    assert.strictEqual(s2.structuredContent?.first_step, 2);
    const fin = await ok('finish');
    assert.strictEqual(fin.structuredContent?.steps, 3);
    const ckFile = path.join(runDir, 'checkpoints.jsonl');
    assert.deepStrictEqual(
      parseRecords(fs.readFileSync(ckFile, 'utf8'), ckFile, CheckpointRecord).records.map((c) => [c.name, c.batch]),
      [['reference', 0], ['final', 3]],
    );
  });
});
