// The agent's export_checkpoint tool over MCP (`tinker-studio mcp`, the built CLI): a fixture
// checkpoint folder merged into its base, paths relative to the workspace; a DeepSeek V3 adapter is
// refused by name as the tool's answer.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { FIXTURES, tensorHashes } from '../export/merge.test';

const CLI = path.join(__dirname, '../../../src/cli/main.js');

interface CallResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
}
const textOf = (r: CallResult) => r.content.map((c) => c.text ?? '').join('\n');

describe('agent export_checkpoint tool over MCP', function () {
  this.timeout(120_000);
  let tmp: string;
  let client: Client;
  const call = async (args: Record<string, unknown>) => (await client.callTool({ name: 'export_checkpoint', arguments: args })) as CallResult;

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-mcp-export-'));
    fs.cpSync(path.join(FIXTURES, 'qwen3_moe'), path.join(tmp, 'moe'), { recursive: true });
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

  it('merges a checkpoint folder into its base, and refuses a DeepSeek V3 adapter by name', async () => {
    const r = await call({ checkpoint: 'moe/checkpoint', kind: 'merge', base: 'moe/base-fused', output: 'merged' });
    assert.ok(!r.isError, textOf(r));
    assert.match(textOf(r), /^merged model of Qwen\/Qwen3-30B-A3B written to /);
    const golden = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'goldens.json'), 'utf8')).families.qwen3_moe.bases['base-fused'].tensors;
    assert.deepStrictEqual(await tensorHashes(path.join(tmp, 'merged')), golden);
    const cfg = path.join(tmp, 'moe', 'checkpoint', 'adapter_config.json');
    fs.writeFileSync(cfg, JSON.stringify({ ...JSON.parse(fs.readFileSync(cfg, 'utf8')), base_model_name_or_path: 'deepseek-ai/DeepSeek-V3.1' }));
    const refused = await call({ checkpoint: 'moe/checkpoint', kind: 'adapter', output: 'adapter' });
    assert.ok(refused.isError);
    assert.match(textOf(refused), /DeepSeek V3 models have no LoRA adapter form/);
    assert.ok(!fs.existsSync(path.join(tmp, 'adapter')));
  });
});
