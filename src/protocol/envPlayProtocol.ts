// The messages between the Play as the Model panel (webview/envplay) and its host
// (src/vscode/envs/envPlayPanel.ts), inside the envelope of panelProtocol.ts. The webview owns the
// form (env file, dataset line or typed problem, model and renderer); the host runs the episode in
// the env worker pool and sends the whole episode view each time it changes. The same view shows an
// episode the model played ("Dry Run Episode").
import * as z from 'zod';
import { ChatMessage, ToolSpec } from './chatMessage';
import { TranscriptTurn } from './sampleSchema';
import type { PanelProtocol } from './panelProtocol';

const Path = z.string().min(1).max(4096);

/** Where the env's dataset line comes from: a line of a JSONL file, or typed (JSON, else the text itself). */
export const ProblemSource = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('line'), file: Path, line: z.number().int().positive().max(10_000_000) }),
  z.object({ kind: z.literal('text'), text: z.string().max(100_000) }),
]);
export type ProblemSource = z.infer<typeof ProblemSource>;

export const EnvPlayForm = z.object({
  envFile: Path.optional(),
  /** the class to run when the file defines several */
  className: z.string().max(200).optional(),
  problem: ProblemSource,
  /** the model whose renderer parses the typed replies */
  model: z.string().min(1).max(300),
  /** the renderer (absent: the model's recommended one) */
  renderer: z.string().min(1).max(100).optional(),
});
export type EnvPlayForm = z.infer<typeof EnvPlayForm>;

export const EnvErrorView = z.object({
  /** initial_observation, step (turn 2), compute_group_rewards, episode */
  where: z.string(),
  kind: z.string(),
  message: z.string(),
  traceback: z.string().optional(),
  line: z.number().int().positive().optional(),
});

/** One episode as the panel shows it: the turns done, the observation awaiting a reply, the end. */
export const EnvPlayView = z.object({
  id: z.string().max(100),
  /** who writes the assistant's replies */
  player: z.enum(['you', 'model']),
  envFile: z.string(),
  className: z.string(),
  renderer: z.string(),
  model: z.string().optional(),
  /** the dataset line, as JSON text */
  problem: z.string(),
  tools: z.array(ToolSpec).optional(),
  turns: z.array(TranscriptTurn),
  /** the messages new since the last reply, awaiting the next (reset: the env rewrote the history) */
  pending: z.object({ messages: z.array(ChatMessage), reset: z.boolean().optional() }).optional(),
  /** messages the env added after the last reply of an episode ended by max_turns */
  trailing: z.array(ChatMessage).optional(),
  status: z.enum(['starting', 'awaiting', 'done', 'failed', 'cancelled']),
  /** why it ended: completed, max_turns, max_tokens, context_overflow, parse_error, env_error */
  stop: z.string().optional(),
  error: EnvErrorView.optional(),
  /** compute_group_rewards of this one episode, when the file has it */
  group: z.union([z.object({ reward: z.number(), metrics: z.record(z.string(), z.number()) }), z.object({ error: z.string() })]).optional(),
  /** the sum of the step rewards (and the group reward) */
  total: z.number(),
});
export type EnvPlayView = z.infer<typeof EnvPlayView>;

export const EnvPlaySnapshot = z.object({
  type: z.literal('snapshot'),
  form: EnvPlayForm,
  /** env files the panel offers: those named by specs, and the workspace's *.env.* files */
  envFiles: z.array(z.string()),
  /** JSONL files beside the chosen env file and its specs' datasets */
  datasets: z.array(z.string()),
  renderers: z.array(z.string()),
  /** env code runs only in a trusted workspace */
  trusted: z.boolean(),
  view: EnvPlayView.optional(),
});
export type EnvPlaySnapshot = z.infer<typeof EnvPlaySnapshot>;

export const ToWebview = z.discriminatedUnion('type', [
  EnvPlaySnapshot,
  /** the host changed the form (opened from an env file, a picked file) */
  z.object({ type: z.literal('form'), form: EnvPlayForm, datasets: z.array(z.string()) }),
  z.object({ type: z.literal('view'), view: EnvPlayView }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type ToWebview = z.infer<typeof ToWebview>;

export const FromWebview = z.discriminatedUnion('type', [
  /** start (or restart) an episode with the form */
  z.object({ type: z.literal('start'), form: EnvPlayForm }),
  /** the assistant's reply, typed */
  z.object({ type: z.literal('reply'), text: z.string().max(100_000) }),
  /** stop the episode in progress */
  z.object({ type: z.literal('stop') }),
  z.object({ type: z.literal('saveForm'), form: EnvPlayForm }),
  z.object({ type: z.literal('pickEnvFile') }),
  z.object({ type: z.literal('pickDataset') }),
  /** the env file at a line (an error's) */
  z.object({ type: z.literal('openEnvFile'), line: z.number().int().positive().optional() }),
  z.object({ type: z.literal('webviewError'), message: z.string().max(4000) }),
]);
export type FromWebview = z.infer<typeof FromWebview>;

export const EnvPlayRequests = {};

export const EnvPlayPanelState = z.object({ kind: z.literal('envPlay') });
export type EnvPlayPanelState = z.infer<typeof EnvPlayPanelState>;

export const EnvPlayProtocol = {
  toWebview: ToWebview,
  fromWebview: FromWebview,
  requests: EnvPlayRequests,
  state: EnvPlayPanelState,
} satisfies PanelProtocol;

/** Each turn's reward as text: "+1", "−0.5", "0". */
export function formatStepReward(r: number): string {
  const t = Number.isInteger(r) ? String(Math.abs(r)) : String(Math.abs(Number(r.toFixed(4))));
  return r > 0 ? `+${t}` : r < 0 ? `−${t}` : '0';
}

/** Why an episode ended, in words. */
export function stopText(stop: string | undefined): string {
  switch (stop) {
    case 'completed':
      return 'the environment ended the episode';
    case 'max_turns':
      return 'max_turns reached';
    case 'max_tokens':
      return 'a reply was cut off at max_tokens (context overflow reward)';
    case 'context_overflow':
      return 'the next observation would overflow max_trajectory_tokens (context overflow reward)';
    case 'parse_error':
      return 'the reply did not parse (failed_parse_reward)';
    case 'env_error':
      return 'the environment failed: the episode scores 0';
    default:
      return stop ?? '';
  }
}
