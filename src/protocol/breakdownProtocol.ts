// The messages between the GRPO group breakdown panel (webview/breakdown) and its host
// (src/vscode/breakdown/breakdownPanel.ts), inside the envelope of panelProtocol.ts. One panel per run
// directory shows one iteration at a time; stepping to another keeps the webview's filters.
import * as z from 'zod';
import { GroupPrompt, SampleRecord, SampleSummary } from './sampleSchema';
import type { PanelProtocol } from './panelProtocol';

export const Split = z.enum(['train', 'eval']);
export type Split = z.infer<typeof Split>;

export const IterationRef = z.object({ iteration: z.number().int().nonnegative(), split: Split });
export type IterationRef = z.infer<typeof IterationRef>;

export const BreakdownSnapshot = z.object({
  type: z.literal('snapshot'),
  runName: z.string(),
  runDir: z.string(),
  shown: IterationRef,
  /** every iteration with a samples file, ascending, per split */
  available: z.object({ train: z.array(z.number().int()), eval: z.array(z.number().int()) }),
  /** the samples as the list shows them (a whole sample is a `sample` request; text search a `search` request) */
  records: z.array(SampleSummary),
  /** each group's prompt, once */
  prompts: z.array(GroupPrompt),
  /** KL and entropy of that step from metrics.jsonl, when logged */
  step: z.object({ kl: z.number().nullable(), entropy: z.number().nullable() }),
  /** a distillation run without a reward: its training samples all score 0 by design (the KL to the teacher is the signal) */
  rewardless: z.boolean().optional(),
  /** an environment run: its env file's name (the doctor and the error links name it; the link opens the file config.json names) */
  envFile: z.string().optional(),
  /** why there are no samples (a cookbook run directory, an iteration not sampled yet) and what there is instead */
  missing: z.string().optional(),
  /** lines of the samples file that were left out */
  problems: z.array(z.string()),
  /** the first groups of a large samples file: a complete snapshot follows when the rest is read */
  loading: z.object({ bytesRead: z.number().int().nonnegative(), bytesTotal: z.number().int().nonnegative() }).optional(),
});
export type BreakdownSnapshot = z.infer<typeof BreakdownSnapshot>;

export const ToWebview = z.discriminatedUnion('type', [BreakdownSnapshot, z.object({ type: z.literal('error'), message: z.string() })]);
export type ToWebview = z.infer<typeof ToWebview>;

export const FromWebview = z.discriminatedUnion('type', [
  /** show another iteration (prev/next, or picked) */
  z.object({ type: z.literal('show'), ref: IterationRef }),
  /** open the reward file (an environment run: the env file) at the traceback's line */
  z.object({ type: z.literal('openRewardFile'), line: z.number().int().positive().optional() }),
  /** open the group's best and worst samples in the diff editor */
  z.object({ type: z.literal('compareBestWorst'), ref: IterationRef, groupIdx: z.number().int().nonnegative() }),
  /** open a sample's holdout problem in another evaluation of the run (first vs latest by default) */
  z.object({ type: z.literal('compareEvaluations'), ref: IterationRef, groupIdx: z.number().int().nonnegative(), trajIdx: z.number().int().nonnegative() }),
  /** open a sample's prompt in another run (picked) */
  z.object({ type: z.literal('compareRuns'), ref: IterationRef, groupIdx: z.number().int().nonnegative(), trajIdx: z.number().int().nonnegative() }),
  /** the multi-diff of holdout problems whose reward changed between this evaluation and the first (or the latest) */
  z.object({ type: z.literal('whatChanged'), ref: IterationRef }),
  /** the sample's problem (conversation, ground truth) in the sample playground */
  z.object({ type: z.literal('openInPlayground'), problemId: z.string().min(1).max(10_000) }),
  z.object({ type: z.literal('webviewError'), message: z.string().max(4000) }),
]);
export type FromWebview = z.infer<typeof FromWebview>;

export const GroupFilterState = z.object({
  kinds: z.array(z.enum(['mixed', 'all-good', 'all-bad'])),
  rewardError: z.boolean(),
  truncated: z.boolean(),
  text: z.string().max(1000),
});

export const BreakdownPanelState = z.object({
  runDir: z.string().min(1),
  shown: IterationRef.optional(),
  filter: GroupFilterState.optional(),
  sort: z.enum(['index', 'reward-desc', 'reward-asc', 'spread-desc', 'errors-desc']).optional(),
  expanded: z.array(z.number().int()).max(10_000).optional(),
});
export type BreakdownPanelState = z.infer<typeof BreakdownPanelState>;

export const BreakdownRequests = {
  /** one sample in full: its completion, the content the reward saw, token ids and log-probs (the detail and token view) */
  sample: {
    params: z.object({ ref: IterationRef, groupIdx: z.number().int().nonnegative(), trajIdx: z.number().int().nonnegative() }),
    result: z.object({
      completion: z.string(),
      content: z.string(),
      tokens: z.array(z.number().int()),
      logprobs: z.array(z.number()),
      /** a distillation run's teacher log-prob of each token */
      teacher_logprobs: z.array(z.number()).optional(),
      /** the parsed reply beyond its content: reasoning (shown folded), tool calls, malformed calls */
      thinking: SampleRecord.shape.thinking,
      tool_calls: SampleRecord.shape.tool_calls,
      unparsed_tool_calls: SampleRecord.shape.unparsed_tool_calls,
      /** an environment run's episode: every turn (the detail shows it as a transcript) */
      transcript: SampleRecord.shape.transcript,
    }),
  },
  /** the groups whose prompt or a completion contains `text` (case-insensitive) */
  search: {
    params: z.object({ ref: IterationRef, text: z.string().max(1000) }),
    result: z.object({ groups: z.array(z.number().int().nonnegative()) }),
  },
};

export const BreakdownProtocol = {
  toWebview: ToWebview,
  fromWebview: FromWebview,
  requests: BreakdownRequests,
  state: BreakdownPanelState,
} satisfies PanelProtocol;
