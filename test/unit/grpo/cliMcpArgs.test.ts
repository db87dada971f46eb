// The CLI's options as node:util's parseArgs reads them: `--name=value` as well as `--name value`,
// and the mcp command's own options, which the training commands do not take.
import * as assert from 'assert';
import { parseArgs, USAGE } from '../../../src/cli/args';
import { AGENT_TOOLS } from '../../../src/core/agent/tools';

describe('tinker-studio CLI options', () => {
  it('takes --name=value, even a value that starts with dashes', () => {
    assert.deepStrictEqual(parseArgs(['grpo', 'a.grpo.json', '--runs-dir=--odd', '--backend=local']), { command: 'grpo', spec: 'a.grpo.json', runsDir: '--odd', backend: 'local' });
  });

  it('gives mcp its workspace and busy wait, and refuses them to grpo', () => {
    assert.deepStrictEqual(parseArgs(['mcp', '--workspace', 'w', '--busy-wait-ms', '10', '--python', 'py']), { command: 'mcp', workspace: 'w', busyWaitMs: 10, python: 'py' });
    assert.throws(() => parseArgs(['mcp', '--busy-wait-ms', '1.5']), /--busy-wait-ms must be a whole number of milliseconds/);
    assert.throws(() => parseArgs(['mcp', 'a.grpo.json']), /mcp takes no spec file/);
    assert.throws(() => parseArgs(['grpo', 'a', '--workspace', 'w']), /unknown option --workspace/);
    assert.throws(() => parseArgs(['grpo', 'a', '--runs-dir', '--resume', 'x']), /--runs-dir needs a value/);
  });

  it('--help names every agent tool of the table (mcp serves them all), in lines of at most 104 characters', () => {
    const text = USAGE.replace(/\s+/g, ' ');
    assert.ok(AGENT_TOOLS.length >= 15);
    assert.ok(text.includes(`"mcp" serves the ${AGENT_TOOLS.length} agent tools (${AGENT_TOOLS.map((t) => t.name).join(', ')}) to an MCP client`), USAGE);
    for (const line of USAGE.split('\n').filter((l) => l.includes('agent tools') || AGENT_TOOLS.some((t) => l.includes(`${t.name},`)))) assert.ok(line.length <= 104, line);
  });
});
