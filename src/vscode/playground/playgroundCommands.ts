// "Tinker: Open Sample Playground": from the palette (the form as last left), from a checkpoint of
// the Checkpoints view (that sampler checkpoint against its run's base model), from a run (its latest
// sampler checkpoint against its base model), or with a preset ({A, B, messages, groundTruth,
// rewardFile}, or a run's problem {runDir, problemId}) from other panels.
import * as vscode from 'vscode';
import { COMMAND } from '../common/commandIds';
import { registerTable } from '../common/commandTable';
import type { Log } from '../common/log';
import type { PlaygroundPreset } from './playgroundPanel';
import { openPlayground, PlaygroundPanels } from './playgroundPanels';

export interface PlaygroundCommandServices {
  log: Log;
  playground: PlaygroundPanels;
  /** where Hugging Face dataset rows are cached (a run's problem) */
  cacheDir: string;
}

export function registerPlaygroundCommands(s: PlaygroundCommandServices): vscode.Disposable[] {
  const open = async (arg?: unknown) => (await openPlayground(s.playground, await presetOf(arg, s.cacheDir))) !== undefined;
  return registerTable({ [COMMAND.openPlayground]: open, [COMMAND.openInPlayground]: open }, s.log);
}

/** What the playground opens with for a command argument (a tree node, a preset, or nothing). */
export async function presetOf(arg: unknown, cacheDir: string): Promise<PlaygroundPreset | undefined> {
  if (arg === undefined || arg instanceof vscode.Uri) return undefined;
  const { z } = await import('zod');
  const { SideSource, ChatMessage } = await import('../../protocol/playgroundProtocol');
  const run = z.object({ dir: z.string().min(1), model: z.string().optional(), checkpoints: z.array(z.object({ sampler_path: z.string().optional() }).passthrough()) }).passthrough();
  const parsed = z
    .union([
      /** a path node of the Checkpoints view */
      z.object({ kind: z.literal('path'), which: z.enum(['sampler', 'state']), tinkerPath: z.string().min(1), run }),
      /** a checkpoint node of the Checkpoints view */
      z.object({ kind: z.literal('checkpoint'), checkpoint: z.object({ name: z.string(), sampler_path: z.string().optional() }).passthrough(), run }),
      /** a sample's problem in the breakdown panel */
      z.object({ runDir: z.string().min(1), problemId: z.string().min(1) }).strict(),
      /** a run node of the Runs or Checkpoints view */
      z.object({ kind: z.literal('run'), run }),
      z.object({ A: SideSource.optional(), B: SideSource.optional(), messages: z.array(ChatMessage).optional(), groundTruth: z.string().optional(), rewardFile: z.string().optional() }).strict(),
    ])
    .safeParse(arg);
  if (!parsed.success) throw new Error(`Tinker: Open Sample Playground: unexpected argument (${parsed.error.issues[0]?.message ?? 'invalid'})`);
  const a = parsed.data;
  if ('problemId' in a) return problemPreset(a.runDir, a.problemId, cacheDir);
  if (!('kind' in a)) return a;
  const r = a.run;
  let path: string | undefined;
  if (a.kind === 'path') {
    if (a.which === 'state') throw new Error(`${a.tinkerPath} is a training state; the playground samples sampler weights (use the checkpoint's sampler path)`);
    path = a.tinkerPath;
  }
  else if (a.kind === 'checkpoint') {
    path = a.checkpoint.sampler_path;
    if (!path) throw new Error(`checkpoint ${a.checkpoint.name} has no sampler weights to sample from (only a training state); save one with a sampler path`);
  } else {
    path = [...r.checkpoints].reverse().find((c) => c.sampler_path)?.sampler_path;
    if (!path) throw new Error(`the run ${r.dir} has no sampler checkpoint yet`);
  }
  const rewardFile = await runRewardFile(r.dir);
  return {
    ...(r.model ? { A: { kind: 'base' as const, model: r.model } } : {}),
    B: { kind: 'checkpoint' as const, path },
    ...(rewardFile ? { rewardFile } : {}),
  };
}

async function problemPreset(runDir: string, problemId: string, cacheDir: string): Promise<PlaygroundPreset> {
  const { runProblems, findProblem, problemPrompt } = await import('../../core/playground/problems');
  const problems = await runProblems(runDir, cacheDir);
  const problem = findProblem(problems, problemId);
  if (!problem) throw new Error(`the dataset of ${runDir} has no problem ${problemId} (has the dataset changed since the run?)`);
  return problemPrompt(problem, problems.rewardFile);
}

async function runRewardFile(runDir: string): Promise<string | undefined> {
  const { readRunConfig, rewardFileOfConfig } = await import('../../core/runs/runConfig');
  try {
    const config = await readRunConfig(runDir);
    return config ? rewardFileOfConfig(config, runDir) : undefined;
  } catch {
    return undefined;
  }
}
