// The agent's publish_to_hub tool over MCP (`tinker-studio mcp`, the built CLI) against a STAND-IN of
// the Hugging Face Hub (HF_ENDPOINT; the real Hub cannot be reached here): an exported adapter folder
// published to a private repo, recorded on the workspace registry's version; without a token it says
// how to set one.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { exportCheckpoint } from '../../../src/core/export/exportCheckpoint';
import { registerFromPath } from '../../../src/core/models/lifecycle';
import { readRegistry } from '../../../src/core/models/store';
import { FIXTURES } from '../export/merge.test';
import { startHubStandIn, type HubStandIn } from '../export/hubStandIn';

const CLI = path.join(__dirname, '../../../src/cli/main.js');
const TOKEN = 'hf_agentStandInToken0123456789';
const TINKER_PATH = 'tinker://run-agent/sampler_weights/000010';

interface CallResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
}
const textOf = (r: CallResult) => r.content.map((c) => c.text ?? '').join('\n');

async function mcp(tmp: string, env: Record<string, string>): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--backend', 'local', '--workspace', tmp, '--runs-dir', path.join(tmp, 'runs'), '--cache-dir', path.join(tmp, 'cache')],
    env: { ...(process.env as Record<string, string>), TINKER_API_KEY: '', HF_TOKEN: '', ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'tinker-studio-test', version: '0.0.0' });
  await client.connect(transport);
  return client;
}

describe('agent publish_to_hub tool over MCP', function () {
  this.timeout(120_000);
  let tmp: string;
  let hub: HubStandIn;
  const clients: Client[] = [];

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-mcp-publish-'));
    await exportCheckpoint({ kind: 'adapter', checkpointDir: path.join(FIXTURES, 'qwen3/checkpoint'), outDir: path.join(tmp, 'adapter'), tinkerPath: TINKER_PATH });
    await registerFromPath(path.join(tmp, 'tinker-models.json'), { name: 'agent-model', samplerPath: TINKER_PATH, baseModel: 'Qwen/Qwen3-8B', by: { os_user: 'test' } });
    hub = await startHubStandIn({ token: TOKEN });
  });
  after(async () => {
    for (const c of clients) await c.close();
    await hub?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('publishes an exported folder to a private repo and records it on the registry version', async () => {
    const client = await mcp(tmp, { HF_TOKEN: TOKEN, HF_ENDPOINT: hub.url });
    clients.push(client);
    const r = (await client.callTool({ name: 'publish_to_hub', arguments: { source: 'adapter', repo: 'agent/qwen3-lora' } })) as CallResult;
    assert.ok(!r.isError, textOf(r));
    assert.match(textOf(r), new RegExp(`^created private repo agent/qwen3-lora \\(\\d+ files\\): ${hub.url}/agent/qwen3-lora; recorded on agent-model@v1$`));
    assert.strictEqual(hub.repos.get('agent/qwen3-lora')?.private, true);
    const v = (await readRegistry(path.join(tmp, 'tinker-models.json'))).versions[0]!;
    assert.deepStrictEqual([v.exports?.[0]?.path, v.exports?.[0]?.hub_url], ['adapter', `${hub.url}/agent/qwen3-lora`]);
  });

  it('without a token it says how to set one, and sends nothing', async () => {
    const client = await mcp(tmp, { HF_ENDPOINT: hub.url });
    clients.push(client);
    const before = hub.seen.length;
    const r = (await client.callTool({ name: 'publish_to_hub', arguments: { source: 'adapter', repo: 'agent/none' } })) as CallResult;
    assert.ok(r.isError);
    assert.match(textOf(r), /Set Hugging Face Token/);
    assert.strictEqual(hub.seen.length, before);
  });
});
