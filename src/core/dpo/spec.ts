// DPO run specs (`*.dpo.json`), with names after the cookbook's preference/train_dpo.Config where it
// has one (learning_rate 1e-5 with a linear schedule, dpo_beta 0.1), declared to the spec layer.
import * as z from 'zod';
import { defineSpec, type Resolved } from '../spec/define';
import { heldOutSet, positiveInt } from '../spec/fields';

/** The cookbook's DPO learning rate (train_dpo.Config): the get_lr formula is SFT's and does not apply. */
export const DPO_DEFAULT_LEARNING_RATE = 1e-5;

export const DpoDatasetSpec = z
  .strictObject({
    path: z.string().min(1).describe('JSONL file of preference pairs, relative to the spec file: {"prompt" | "messages", "chosen", "rejected"} (each completion a string or an assistant message), or the cookbook\'s {"comparison": {prompt_conversation, completion_A, completion_B}, "label": "A" | "B"}.'),
    validation: heldOutSet('validation pairs', { zero: false, for: 'validation' }, 'Pairs kept out of training; their DPO loss, accuracy, margin and chosen NLL (test/…) are measured every `eval_every` steps. Absent: no validation.').optional(),
    on_invalid_line: z
      .enum(['skip', 'stop'])
      .default('skip')
      .describe('A line that is not a valid pair (a tie included): "skip" (default) leaves it out and names it in the log; "stop" fails with its file and line.'),
  })
  .describe('The preference pairs to train on.');
export type DpoDatasetSpec = z.output<typeof DpoDatasetSpec>;

export const DPO_SPEC = defineSpec({
  kind: 'dpo',
  resumable: ['max_steps', 'num_epochs', 'eval_every'],
  fields: {
    dataset: DpoDatasetSpec,
    dpo_beta: z.number().gt(0).default(0.1).describe('β of the DPO loss −log σ(β·[(log π(c) − log π_ref(c)) − (log π(r) − log π_ref(r))]): how far the policy may move from the reference. Larger keeps it closer (the loss saturates sooner); smaller lets it move further.'),
    nll_weight: z
      .number()
      .min(0)
      .default(0)
      .describe("Weight α of an NLL term on the chosen completions added to the DPO loss (mean NLL per token; DPO + NLL, Pang et al. 2024). 0 (default): DPO alone, as the cookbook. A small α (0.1–1) keeps the chosen completions likely when pairs differ in a token or two, where DPO alone can lower both sides."),
    batch_size: positiveInt().default(32).describe('Pairs per optimizer step.'),
    num_epochs: positiveInt().optional().describe('Passes over the training pairs (default 1). Give this or `max_steps`, or both (the smaller wins).'),
    max_steps: positiveInt().optional().describe('Stop after this many steps.'),
    lr_schedule: z.enum(['linear', 'cosine', 'constant']).default('linear').describe("Multiplier of the learning rate over the steps (the cookbook's DPO: linear)."),
    eval_every: z.number().int().min(0).default(10).describe('Measure the validation pairs every this many steps, before the update (0: never).'),
    max_length: positiveInt().optional().describe('Tokens per prompt + completion at most; longer ones are cut at the end.'),
  },
  files: [['dataset', 'path'], ['dataset', 'validation', 'path']],
  words: {
    backendRuns: 'training',
    learningRate: `Peak Adam learning rate. Default ${DPO_DEFAULT_LEARNING_RATE} (the cookbook's DPO default; the get_lr formula is calibrated for SFT and does not apply).`,
    seed: 'Seed of the shuffles (validation split, batch order per epoch) and of the LoRA initialisation.',
  },
  describe: 'A DPO (preference) run on Tinker Studio: model, preference pairs and hyper-parameters. The reference model is the weights at step 0.',
});

export const DpoSpec = DPO_SPEC.schema;
export type DpoSpec = z.output<typeof DpoSpec>;
export type ResolvedDpoSpec = Resolved<DpoSpec>;
export const { parseFile: parseDpoSpecFile, parseValue: parseDpoSpecValue, fromConfig: dpoSpecFromConfig } = DPO_SPEC;
