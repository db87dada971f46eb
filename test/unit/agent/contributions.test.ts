// package.json contributes the agent tools to VS Code (languageModelTools) as static JSON; the core's
// table (src/core/agent/tools.ts) is what runs them. These must say the same: the same names, and
// each contributed input schema is the JSON schema of the tool's zod input.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { z } from 'zod';
import { AGENT_TOOLS } from '../../../src/core/agent/tools';

const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../../package.json'), 'utf8')) as {
  contributes: { languageModelTools: Array<{ name: string; modelDescription: string; inputSchema: unknown }>; mcpServerDefinitionProviders: Array<{ id: string }> };
};

describe('agent tool contributions (package.json) match the core table', () => {
  it('names, descriptions and input schemas', () => {
    const contributed = pkg.contributes.languageModelTools;
    assert.deepStrictEqual(contributed.map((t) => t.name), AGENT_TOOLS.map((t) => t.name));
    for (const t of AGENT_TOOLS) {
      const c = contributed.find((x) => x.name === t.name)!;
      assert.strictEqual(c.modelDescription, t.description, `${t.name}: modelDescription`);
      const schema = z.toJSONSchema(t.input, { target: 'draft-07', io: 'input' }) as Record<string, unknown>;
      delete schema.$schema;
      assert.deepStrictEqual(c.inputSchema, schema, `${t.name}: inputSchema (regenerate package.json's languageModelTools from src/core/agent/tools.ts)`);
    }
  });

  it('offers the MCP server to VS Code', () => {
    assert.deepStrictEqual(pkg.contributes.mcpServerDefinitionProviders.map((p) => p.id), ['tinker-studio.agent']);
  });
});
