// A second model a run scores its samples with, as a spec names it: the schema GRPO specs (teacher,
// kl_reference) and SFT specs (teacher) share.
import * as z from 'zod';

/**
 * A second model the run scores its samples with (a distillation teacher, a KL reference): a base
 * model, a tinker:// sampler checkpoint, or a named sampler checkpoint of a run directory.
 */
export const ModelSourceSpec = z
  .strictObject({
    model: z.string().min(1).optional().describe('A base model, e.g. "Qwen/Qwen3-8B" or "tinker-studio/arith-gpt".'),
    checkpoint: z
      .string()
      .min(1)
      .optional()
      .describe('A tinker:// sampler path (alone), or, with `run`, the name of one of that run\'s sampler checkpoints (e.g. "final").'),
    run: z
      .string()
      .min(1)
      .optional()
      .describe('A run directory (relative to the spec file) or "latest": the newest run next to the spec (its `runs` folder, its folder, the runs folder) that is not itself a distillation run and has the named checkpoint.'),
  })
  .superRefine((t, ctx) => {
    if (t.run !== undefined) {
      if (t.model !== undefined) ctx.addIssue({ code: 'custom', path: ['model'], message: 'not used with "run" (the run\'s config.json names its model)' });
      if (t.checkpoint === undefined) ctx.addIssue({ code: 'custom', path: ['checkpoint'], message: 'give the name of the run\'s sampler checkpoint, e.g. "final"' });
      else if (t.checkpoint.startsWith('tinker://')) ctx.addIssue({ code: 'custom', path: ['checkpoint'], message: 'with "run", a checkpoint name such as "final"; a tinker:// path goes without "run"' });
    } else if ((t.model === undefined) === (t.checkpoint === undefined)) {
      ctx.addIssue({ code: 'custom', message: t.model === undefined ? 'give "model" (a base model), "checkpoint" (a tinker:// sampler path) or "run" and "checkpoint"' : 'give either "model" or "checkpoint", not both' });
    } else if (t.checkpoint !== undefined && !t.checkpoint.startsWith('tinker://')) {
      ctx.addIssue({ code: 'custom', path: ['checkpoint'], message: 'must be a tinker:// sampler path, e.g. tinker://<run id>/sampler_weights/final (or add "run" to name a run\'s checkpoint)' });
    }
  });
export type ModelSourceSpec = z.output<typeof ModelSourceSpec>;
