// `tinker-studio mcp`: the agent tools (src/core/agent/tools.ts, and init_<id> / train_<id>_step of
// each kind registered in the kinds table) served to any MCP client over stdio, with the training
// doctrine as a prompt and a resource. stdout carries the protocol only: every log line goes to stderr.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { SessionBusyError, TrainingSession } from '../core/agent/session';
import { agentTools, TRAINING_DOCTRINE } from '../core/agent/tools';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { errorMessage } from '../core/errors';

export const DOCTRINE_URI = 'tinker-studio://doctrine';

/** Serves `session` on stdin/stdout (or `transport`) until the client closes the connection. */
export async function serveMcp(session: TrainingSession, o: { version: string; redact: (text: string) => string; transport?: Transport }): Promise<void> {
  const server = new McpServer({ name: 'tinker-studio', version: o.version });
  // the tools are served through the protocol's own handlers, not registerTool: the SDK would check the
  // arguments itself and answer a wrong type or range in zod's words; run() checks them in ours
  server.server.registerCapabilities({ tools: {} });
  server.server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: agentTools().map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: z.toJSONSchema(t.input, { target: 'draft-7', io: 'input' }) as { type: 'object'; [k: string]: unknown },
      annotations: { readOnlyHint: !t.confirm, openWorldHint: false },
    })),
  }));
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    try {
      const tools = agentTools();
      const t = tools.find((x) => x.name === request.params.name);
      if (!t) throw new Error(`unknown tool "${request.params.name}"; the tools are ${tools.map((x) => x.name).join(', ')}`);
      const r = await t.run(session, request.params.arguments ?? {}, extra.signal);
      return { content: [{ type: 'text' as const, text: o.redact(r.text) }], structuredContent: r.value as Record<string, unknown> };
    } catch (err) {
      const text = o.redact(errorMessage(err));
      return {
        isError: true,
        content: [{ type: 'text' as const, text }],
        structuredContent: err instanceof SessionBusyError ? { busy: true, status: err.status } : { error: text },
      };
    }
  });
  server.registerPrompt('training_doctrine', { title: 'How to train with Tinker Studio', description: 'The working rules for training with these tools: small steps, read the group breakdown, fix the reward first.' }, () => ({
    messages: [{ role: 'user' as const, content: { type: 'text' as const, text: TRAINING_DOCTRINE } }],
  }));
  server.registerResource('doctrine', DOCTRINE_URI, { title: 'Training doctrine', mimeType: 'text/plain' }, (uri: URL) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: TRAINING_DOCTRINE }] }));
  const transport = o.transport ?? new StdioServerTransport();
  const closed = new Promise<void>((resolve) => (transport.onclose = () => resolve()));
  await server.connect(transport);
  await closed;
  // the client went away: a resume point, then every client the session holds
  await session.close('the MCP client disconnected');
}
