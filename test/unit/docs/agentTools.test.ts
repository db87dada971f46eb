// docs/agents-and-mcp.md's table of tools names exactly the agent tools the extension and `tinker-studio mcp`
// serve: a new tool without a row, or a row left after a rename, fails here.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { AGENT_TOOLS } from '../../../src/core/agent/tools';

const root = path.resolve(__dirname, '../../../..');

describe('docs: the agent tools table', () => {
  it('has one row for each tool, and no other', () => {
    const page = fs.readFileSync(path.join(root, 'docs', 'agents-and-mcp.md'), 'utf8');
    const rows = [...page.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]!);
    assert.deepStrictEqual([...rows].sort(), AGENT_TOOLS.map((t) => t.name).sort(), 'the tools table of docs/agents-and-mcp.md');
    assert.strictEqual(new Set(rows).size, rows.length, 'a tool has two rows');
  });
});
