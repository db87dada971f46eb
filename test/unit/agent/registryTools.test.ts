// The registry's agent tools over MCP (`tinker-studio mcp`): registry_register from a run folder in the
// workspace, registry_promote through the same gate (crafted suite results: a refusal is the answer,
// with the paired numbers, and changes nothing; anyway needs a reason and is kept), registry_list and
// registry_retire. The MCP server runs the built CLI.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readRegistry } from '../../../src/core/models/store';
import { bits, sftThenGrpo, writeResult, writeSuite } from '../models/modelFixtures';

const CLI = path.join(__dirname, '../../../src/cli/main.js');

interface CallResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
}
const textOf = (r: CallResult) => r.content.map((c) => c.text ?? '').join('\n');

describe('agent registry tools over MCP', function () {
  this.timeout(120_000);
  let tmp: string;
  let client: Client;
  const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallResult;

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-mcp-registry-'));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--backend', 'local', '--workspace', tmp, '--runs-dir', path.join(tmp, 'runs'), '--cache-dir', path.join(tmp, 'cache')],
      env: { ...(process.env as Record<string, string>), TINKER_API_KEY: '' },
      stderr: 'pipe',
    });
    client = new Client({ name: 'tinker-studio-test', version: '0.0.0' });
    await client.connect(transport);
  });
  after(async () => {
    await client?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('registers, refuses a worse version with the paired numbers, promotes anyway with a reason, lists and retires', async () => {
    const { grpoDir, sftDir } = sftThenGrpo(tmp);
    let r = await call('registry_register', { name: 'arith', run_dir: path.relative(tmp, sftDir) });
    assert.ok(!r.isError, textOf(r));
    assert.strictEqual(textOf(r), 'registered arith@v1 (candidate): tinker://sft-run/sampler_weights/final');
    r = await call('registry_register', { name: 'arith', run_dir: path.basename(grpoDir) });
    assert.ok(!r.isError, textOf(r));
    assert.match(textOf(r), /^registered arith@v2/);

    const suite = writeSuite(path.join(tmp, 'suite'));
    const reg = path.join(tmp, 'tinker-models.json');
    const j = JSON.parse(fs.readFileSync(reg, 'utf8'));
    j.gate_suite = 'suite/gate.suite.json';
    fs.writeFileSync(reg, JSON.stringify(j));
    await writeResult(suite, 'tinker://sft-run/sampler_weights/final', { acc: bits(100, 70), nll: Array(100).fill(1) });
    await writeResult(suite, 'tinker://grpo-run/sampler_weights/final', { acc: bits(100, 40), nll: Array(100).fill(1) });

    r = await call('registry_promote', { version: 'arith@v1' });
    assert.ok(!r.isError, textOf(r));
    assert.match(textOf(r), /^arith@v1 is in production\npassed: acc: no production model to compare with/);
    r = await call('registry_promote', { version: 'arith@v2' });
    assert.ok(!r.isError, 'a refusal is an answer');
    assert.strictEqual(r.structuredContent?.refused, true);
    assert.match(textOf(r), /acc: pass@1 0\.4 \[0\.35, 0\.45\] vs production 0\.7 \[0\.65, 0\.75\]; paired difference -0\.3 .* over 100 items \(higher is better\), lower bound .* < −0\.02/);
    assert.strictEqual((await readRegistry(reg)).versions.find((v) => v.id === 'arith@v2')!.status, 'candidate');
    r = await call('registry_promote', { version: 'arith@v2', anyway: '' });
    assert.ok(r.isError);
    assert.match(textOf(r), /needs a written reason/);
    r = await call('registry_promote', { version: 'arith@v2', anyway: 'the agent was told to ship it' });
    assert.ok(!r.isError, textOf(r));
    assert.match(textOf(r), /^arith@v2 is in production \(promoted anyway\); arith@v1 retired/);

    r = await call('registry_list', {});
    assert.match(textOf(r), /^arith@v2 production tinker:\/\/grpo-run\/sampler_weights\/final — acc pass@1 0\.4 \[0\.35, 0\.45\] \(n 100\); nll nll 1 \[0\.95, 1\.05\] \(n 100\)\narith@v1 retired /);
    r = await call('registry_list', { version: 'arith@v2' });
    assert.match(textOf(r), /Chain: SFT → GRPO/);
    assert.match(textOf(r), /\*\*promoted anyway\*\*; reason: the agent was told to ship it/);
    r = await call('registry_retire', { version: 'arith@v2', reason: 'too weak' });
    assert.strictEqual(textOf(r), 'arith@v2 is retired');
  });
});
