// The agent tools of a kind added to the kinds table at run time (registerKind): init_<id> and
// train_<id>_step, served by the session's kind-generic init and train (the built-in kinds keep
// their own tools in tools.ts, whose descriptions and results say more of each).
import * as z from 'zod';
import type { AnyRunKind } from '../training/runKind';
import { runKind, runKindIds } from '../kinds/registry';
import { isSpecKind } from '../spec/kinds';
import { AGENT_TOOLS, tool, type AgentTool } from './tools';

/** Every tool a surface serves now: the table of tools.ts, then init_<id> and train_<id>_step of each registered kind. */
export async function currentAgentTools(): Promise<AgentTool[]> {
  const registered = runKindIds().filter((id) => !isSpecKind(id));
  const extra = await Promise.all(registered.map(async (id) => kindTools(await runKind(id))));
  return [...AGENT_TOOLS, ...extra.flat()];
}

/** init_<id> and train_<id>_step for `kind`, their arguments checked as strictly as every other tool's. */
export function kindTools(kind: AnyRunKind): AgentTool[] {
  const { id, label, extension, unit } = kind.row;
  return [
    tool({
      name: `init_${id}`,
      title: `Start a ${label} session`,
      description: `Validates a ${label} run spec (a *${extension} file) with optional field overrides, connects, creates the run directory and the training client once, and makes it the session; nothing is trained until train_${id}_step.`,
      confirm: true,
      input: z.object({
        spec_file: z.string().min(1).describe(`path of the *${extension} spec, relative to the workspace`),
        overrides: z.record(z.string(), z.unknown()).optional().describe('spec fields to change'),
        resume: z.string().min(1).optional().describe('a run directory to continue (relative to the workspace or the runs folder), or "latest" for the newest run of this spec'),
      }),
      run: (s, a) => s.initRun(id, a),
    }),
    tool({
      name: `train_${id}_step`,
      title: `Train ${label} ${unit.many}`,
      description: `Trains the session's ${label} run for num_steps ${unit.many} (default 1) and reports them.`,
      confirm: true,
      input: z.object({ num_steps: z.number().int().min(1).optional().describe(`${unit.many} to train (default 1)`) }),
      run: (s, a, signal) => s.trainRun(id, a, signal),
    }),
  ];
}
