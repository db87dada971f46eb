// The `env` field of a spec (GRPO runs, eval specs): an environment file instead of a reward file,
// and the episode limits of the cookbook's MessageEnv. One schema: a GRPO spec's `env` and an eval
// spec's `env` (plus its correct_threshold) are this object; episodeLimits and envRunnerOptions turn
// it into what the episode runner and the worker pool take, for the loop and the evals alike.
import * as z from 'zod';
import { positiveInt } from '../spec/fields';
import { ENV_FILE_SUFFIXES, isEnvFile } from './files';
import type { EpisodeLimits } from './episode';
import type { EnvRunnerOptions } from './runner';

/** An environment file (src/core/env): a class per episode, constructed from the dataset line. */
export const EnvSpec = z
  .strictObject({
    file: z
      .string()
      .min(1)
      .refine(isEnvFile, { message: `must be an environment file: ${ENV_FILE_SUFFIXES.map((s) => `*${s}`).join(', ')}` })
      .describe('Environment file, relative to the spec file: a class constructed from each dataset line, with initial_observation() and step(message) (Python) or initialObservation() and step(message) (JS/TS), and optionally a module-level compute_group_rewards(problems, transcripts).'),
    class: z.string().min(1).optional().describe('The class to run, when the file defines several.'),
    timeout_ms: positiveInt().default(10_000).describe('Per-call time limit (constructor, initial_observation, step, compute_group_rewards); a call over it scores the episode 0 and its worker is replaced.'),
    workers: positiveInt().optional().describe('Parallel environment workers (default: 2); each episode stays on one.'),
    max_turns: positiveInt().default(8).describe('Most assistant turns per episode; an episode still going after them ends (stop/max_turns).'),
    max_trajectory_tokens: positiveInt()
      .optional()
      .describe("Context limit of an episode: an observation whose length plus max_tokens exceeds it ends the episode with context_overflow_reward (the cookbook's max_trajectory_tokens). Capped by the model's context length as the service reports it; absent: the model's context length."),
    failed_parse_reward: z.number().default(-1).describe("Reward of a reply that does not parse (a malformed message or tool call), as the cookbook's MessageEnv."),
    terminate_on_parse_error: z.boolean().default(true).describe('A reply that does not parse ends the episode (false: it is passed to step() as parsed, its unparsed calls listed, and failed_parse_reward added).'),
    context_overflow_reward: z.number().default(-0.1).describe('Reward of an episode ended by the context limit or by a reply cut off at max_tokens.'),
  })
  .describe('The RL environment, instead of a reward function: multi-turn episodes, tool calls, group rewards (the cookbook\'s MessageEnv).');
export type EnvSpec = z.output<typeof EnvSpec>;

/** The episode limits an env spec sets (the run's or eval's max_tokens is added by the caller). */
export function episodeLimits(env: EnvSpec): Omit<EpisodeLimits, 'maxTokens'> {
  return {
    maxTurns: env.max_turns,
    ...(env.max_trajectory_tokens !== undefined ? { maxTrajectoryTokens: env.max_trajectory_tokens } : {}),
    failedParseReward: env.failed_parse_reward,
    terminateOnParseError: env.terminate_on_parse_error,
    contextOverflowReward: env.context_overflow_reward,
  };
}

/** The worker pool's options for an env spec (its file already resolved against the spec's folder). */
export function envRunnerOptions(env: EnvSpec, o: Omit<EnvRunnerOptions, 'file' | 'className' | 'workers' | 'timeoutMs'>): EnvRunnerOptions {
  return { ...o, file: env.file, ...(env.class ? { className: env.class } : {}), ...(env.workers !== undefined ? { workers: env.workers } : {}), timeoutMs: env.timeout_ms };
}
