// The agent tools, written once: name, description, input schema (zod) and what each does on the
// session. The MCP server (`tinker-studio mcp`) and VS Code's language-model tools both serve this
// table (agentTools: the built-in tools, then init_<id> and train_<id>_step of each kind registered
// in the kinds table), so the two surfaces cannot drift apart.
import * as z from 'zod';
import { formatIssue, nearestName } from '../spec/issues';
import { specFileMatch } from '../spec/kinds';
import type { AnyRunKind } from '../training/runKind';
import { registeredRunKinds } from '../kinds/registry';
import { SamplePromptSchema, TrainingSession } from './session';
import { EvalStatusInput, EvaluateInput, evalStatus, evaluate } from './evalTools';
import { RunSuiteInput, SuiteStatusInput, runSuiteTool, suiteStatus } from './suiteTools';
import { StartSweepInput, SweepStatusInput, startSweep, sweepStatus } from './sweepTools';
import { ExportCheckpointInput, exportCheckpointTool } from './exportTools';
import { PublishToHubInput, publishToHubTool } from './publishTools';
import { RegistryListInput, RegistryPromoteInput, RegistryRegisterInput, RegistryRetireInput, registryList, registryPromote, registryRegister, registryRetire } from './registryTools';

export interface AgentTool {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  /** spends compute or changes saved state: surfaces ask the person before running it */
  confirm: boolean;
  run(session: TrainingSession, input: unknown, signal?: AbortSignal): Promise<{ text: string; value: unknown }>;
}

/**
 * Every tool's arguments are checked here, strictly: an argument the tool does not take is an error that
 * names it and lists the ones it accepts (a misspelt `max_problem` must not run an eval without its
 * limit), and a bad value names the argument and what it must be. Both surfaces check through run():
 * the MCP server answers tool calls itself (cli/mcp.ts), not through the SDK's own check in zod's words.
 */
export function strictToolInput<S extends z.ZodObject>(name: string, input: S): z.ZodObject<S['shape'], z.core.$strict> {
  const accepted = Object.keys(input.shape);
  return z.strictObject(input.shape, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? unknownArgumentsText(name, issue.keys, accepted) : undefined),
  }) as z.ZodObject<S['shape'], z.core.$strict>;
}

function unknownArgumentsText(name: string, keys: readonly string[], accepted: readonly string[]): string {
  const each = keys.map((k) => {
    const near = nearestName(k, accepted);
    return `"${k}"${near ? ` (did you mean "${near}"?)` : ''}`;
  });
  const takes = accepted.length ? `it accepts ${accepted.join(', ')}` : 'it takes no arguments';
  return `${name}: unknown argument${keys.length > 1 ? 's' : ''} ${each.join(', ')}; ${takes}`;
}

/** The tool's input errors as one line: `evaluate: max_problems: must be at least 1 (got -3)`. */
export function toolInputError(name: string, schema: z.ZodObject, error: z.ZodError): Error {
  // the unknown arguments first: a misspelt name is usually why a required one is missing
  const issues = [...error.issues].sort((a, b) => Number(b.code === 'unrecognized_keys') - Number(a.code === 'unrecognized_keys'));
  const parts = issues.map((i) => (i.code === 'unrecognized_keys' ? i.message : `${name}: ${formatIssue(i, schema)}${gotText(i)}`));
  return new Error(parts.join('; '));
}

/** ` (got -3)` after a number out of bounds (formatIssue gives the bound only). */
function gotText(i: z.core.$ZodIssue): string {
  if (i.code !== 'too_small' && i.code !== 'too_big') return '';
  return typeof i.input === 'number' ? ` (got ${i.input})` : '';
}

export function tool<S extends z.ZodObject>(t: Omit<AgentTool, 'input' | 'run'> & { input: S; run: (s: TrainingSession, a: z.output<S>, signal?: AbortSignal) => Promise<{ text: string; value: unknown }> }): AgentTool {
  const input = strictToolInput(t.name, t.input);
  return {
    ...t,
    input,
    run: async (s, raw, signal) => {
      const parsed = input.safeParse(raw ?? {}, { reportInput: true });
      if (!parsed.success) throw toolInputError(t.name, input, parsed.error);
      return t.run(s, parsed.data as z.output<S>, signal);
    },
  };
}

export const AGENT_TOOLS: readonly AgentTool[] = [
  tool({
    name: 'init_grpo',
    title: 'Start a GRPO session',
    description:
      `Validates a GRPO run spec (a ${specFileMatch('grpo')} file: model, dataset, reward file or environment file (env: multi-turn episodes), hyperparameters) with optional field overrides, connects, creates the run directory and the training client once, and makes it the session; every later call continues that live run. With resume (a run directory, or "latest" for the newest run of the spec) it continues that run from its last checkpoint. Nothing is trained until train_grpo_step. Replaces an earlier session (which saves a resume point first).`,
    input: z.object({
      spec_file: z.string().min(1).describe(`path of the ${specFileMatch('grpo')} spec, relative to the workspace`),
      overrides: z.record(z.string(), z.unknown()).optional().describe('spec fields to change, e.g. {"learning_rate": 2e-3, "group_size": 8, "iterations": 20}; a budget: {"max_cost_usd": 5} or {"max_tokens_total": 2000000} (a resume may raise it)'),
      resume: z.string().min(1).optional().describe('a run directory to continue (relative to the workspace or the runs folder), or "latest" for the newest run of this spec'),
    }),
    confirm: false,
    run: (s, a) => s.initRun('grpo', a),
  }),
  tool({
    name: 'train_grpo_step',
    title: 'Train GRPO iterations',
    description:
      'Runs num_iterations GRPO iterations (default 1) on the session run: sample groups (or, with an environment, play its episodes), score them with the reward function (or the environment), update the weights. Returns reward mean and trend, ALL-0 / ALL-1 / mixed group counts, truncation, reward errors, KL, entropy, time, best and worst sample of a mixed group, and the run directory.',
    input: z.object({ num_iterations: z.number().int().min(1).max(1000).optional().describe('iterations to run (default 1)') }),
    confirm: true,
    run: (s, a, signal) => s.trainRun('grpo', { ...(a.num_iterations !== undefined ? { num_steps: a.num_iterations } : {}) }, signal),
  }),
  tool({
    name: 'init_sft',
    title: 'Start an SFT session',
    description:
      `Validates an SFT run spec (a ${specFileMatch('sft')} file: model, chats dataset, learning rate and schedule, batch size) with optional field overrides, connects, creates the run directory and the training client once, and makes it the session; every later call continues that live run. With resume (a run directory, or "latest") it continues that run from its last checkpoint. Nothing is trained until train_sft_step. Replaces an earlier session (which saves a resume point first).`,
    input: z.object({
      spec_file: z.string().min(1).describe(`path of the ${specFileMatch('sft')} spec, relative to the workspace`),
      overrides: z.record(z.string(), z.unknown()).optional().describe('spec fields to change, e.g. {"learning_rate": 1e-3, "batch_size": 16, "max_steps": 40}; a budget: {"max_cost_usd": 5} or {"max_tokens_total": 2000000} (a resume may raise it)'),
      resume: z.string().min(1).optional().describe('a run directory to continue (relative to the workspace or the runs folder), or "latest" for the newest run of this spec'),
    }),
    confirm: false,
    run: (s, a) => s.initRun('sft', a),
  }),
  tool({
    name: 'train_sft_step',
    title: 'Train SFT steps',
    description:
      'Runs num_steps supervised steps (default 1) on the session run. Returns the train NLL and its trend, the validation NLL when measured, the learning rate, time, and the run directory. Validation NLL rising while train NLL falls is overfitting: stop or lower the learning rate.',
    input: z.object({ num_steps: z.number().int().min(1).max(10000).optional().describe('steps to run (default 1)') }),
    confirm: true,
    run: (s, a, signal) => s.trainRun('sft', a, signal),
  }),
  tool({
    name: 'init_dpo',
    title: 'Start a DPO session',
    description:
      `Validates a DPO run spec (a ${specFileMatch('dpo')} file: model, preference pairs, dpo_beta, learning rate and schedule, batch size in pairs) with optional field overrides, connects, creates the run directory and the training client once, saves the starting weights as the reference model, and makes it the session; every later call continues that live run. With resume (a run directory, or "latest") it continues that run from its last checkpoint against the same reference. Nothing is trained until train_dpo_step. Replaces an earlier session (which saves a resume point first).`,
    input: z.object({
      spec_file: z.string().min(1).describe(`path of the ${specFileMatch('dpo')} spec, relative to the workspace`),
      overrides: z.record(z.string(), z.unknown()).optional().describe('spec fields to change, e.g. {"learning_rate": 1e-4, "dpo_beta": 0.1, "batch_size": 32, "max_steps": 40}; a budget: {"max_cost_usd": 5} or {"max_tokens_total": 2000000} (a resume may raise it)'),
      resume: z.string().min(1).optional().describe('a run directory to continue (relative to the workspace or the runs folder), or "latest" for the newest run of this spec'),
    }),
    confirm: false,
    run: (s, a) => s.initRun('dpo', a),
  }),
  tool({
    name: 'train_dpo_step',
    title: 'Train DPO steps',
    description:
      'Runs num_steps DPO steps (default 1) on the session run. Returns the DPO loss and its trend, the pair accuracy, the implicit reward margin with the chosen and rejected rewards, the validation accuracy, margin and chosen NLL when measured, the learning rate, time, and the run directory. Both rewards falling while the validation chosen NLL rises is DPO pushing everything down: lower the learning rate or raise dpo_beta.',
    input: z.object({ num_steps: z.number().int().min(1).max(10000).optional().describe('steps to run (default 1)') }),
    confirm: true,
    run: (s, a, signal) => s.trainRun('dpo', a, signal),
  }),
  tool({
    name: 'sample',
    title: 'Sample completions',
    description:
      'Samples n completions of each prompt from the current weights of the live run (or a given tinker:// sampler path). Prompts with a ground_truth are scored by the session reward function (in an environment run the samples are single replies, unscored: the environment scores whole episodes in train_grpo_step).',
    input: z.object({
      prompts: z.array(SamplePromptSchema).optional().describe('[{"prompt": "...", "ground_truth": "..."}] or [{"messages": [...]}]'),
      prompts_file: z.string().optional().describe('JSONL file of the same objects, relative to the workspace'),
      n: z.number().int().min(1).max(64).optional().describe('samples per prompt (default 4)'),
      temperature: z.number().min(0).max(2).optional(),
      max_tokens: z.number().int().min(1).max(8192).optional(),
      checkpoint: z.string().optional().describe('a tinker:// sampler path to sample from instead of the current weights'),
    }),
    confirm: true,
    run: (s, a, signal) => s.sample(a, signal),
  }),
  tool({
    name: 'save',
    title: 'Save a named checkpoint',
    description:
      'Saves the current weights and optimizer state of the live training client under a name; returns its tinker:// state and sampler paths. The checkpoints carry the run\'s metadata (run_name, spec_file, step, the spec\'s checkpoint_metadata) plus any given here, to find them later with checkpoint search.',
    input: z.object({
      name: z.string().min(1).describe('letters, digits, ".", "_" and "-"'),
      metadata: z.record(z.string(), z.string()).optional().describe('extra key/value strings stored with the checkpoint (user_metadata)'),
    }),
    confirm: true,
    run: (s, a) => s.save(a),
  }),
  tool({
    name: 'load',
    title: 'Continue from a checkpoint',
    description: 'Replaces the live training client by one loaded from a tinker:// state path: the next train step continues from it (weights and optimizer; before the first step: weights only).',
    input: z.object({ path: z.string().min(1).describe('tinker://… state path') }),
    confirm: true,
    run: (s, a) => s.load(a),
  }),
  tool({
    name: 'status',
    title: 'Session status',
    description: 'What the session is doing: run, iteration, phase and progress of the call in flight, last metrics, elapsed time; between calls how long it has been idle and what it holds (Tinker session, training client, sampler, reward workers). Cheap; use it as a heartbeat while a long step runs.',
    input: z.object({}),
    confirm: false,
    run: async (s) => ({ text: s.statusText(), value: s.status() }),
  }),
  tool({
    name: 'evaluate',
    title: 'Evaluate models and checkpoints',
    description:
      'Scores base models and tinker:// sampler checkpoints on a dataset with the reward file as grader (or an environment file: each sample an episode, scored by its total reward), or on a public benchmark (gsm8k, math500, ifeval, aime_2025, mmlu_redux) graded as the cookbook grades it: a spec_file (*.eval.json), or targets + dataset + grader, or targets + benchmark inline. Returns the table (mean reward, pass@1, pass@n, stop rate, tokens, each with a 95 % interval) and the paired comparison with the baseline (the first target): difference, permutation p-value, wins/losses/ties. A large eval answers at once with its results folder and goes on in the background (eval_status follows it). Runs beside a training call, never waiting for it; re-running resumes.',
    input: EvaluateInput,
    confirm: true,
    run: (s, a, signal) => evaluate(s, a, signal),
  }),
  tool({
    name: 'eval_status',
    title: 'Evaluation status',
    description: "An eval's progress while it runs, then its table and, per target, the problems it got worse on than the baseline (worst first).",
    input: EvalStatusInput,
    confirm: false,
    run: (s, a) => evalStatus(s, a),
  }),
  tool({
    name: 'run_suite',
    title: 'Run an eval suite on a checkpoint',
    description:
      'Runs (or resumes) every entry of an eval suite (*.suite.json: evals in layers training, benchmark and product, each with a primary metric and a gate) on one checkpoint: a base model name, a tinker:// sampler path, a run directory (its final checkpoint) or "latest". Returns the table of the layers: each entry\'s metric with its 95 % interval and n; results are kept per (suite version, checkpoint) next to the suite file. A large suite answers at once and goes on in the background (suite_status follows it). Runs beside a training call, never waiting for it; re-running samples nothing twice.',
    input: RunSuiteInput,
    confirm: true,
    run: (s, a, signal) => runSuiteTool(s, a, signal),
  }),
  tool({
    name: 'suite_status',
    title: 'Suite status and comparison',
    description:
      "A suite run's progress while it runs, then its table of layers with intervals and why the result is stale if it is (the suite or a data file changed); with compare_with, the two checkpoints side by side: each entry's paired difference (better positive) with its interval and whether its gate passes, compare_with playing the production model.",
    input: SuiteStatusInput,
    confirm: false,
    run: (s, a) => suiteStatus(s, a),
  }),
  tool({
    name: 'start_sweep',
    title: 'Start or resume a sweep',
    description:
      'Starts a hyperparameter sweep from a sweep file (*.sweep.json or *.sweep.yaml: a base run spec, parameters by dot path as grid or random, the metric to rank by, optional median early stopping). Every point\'s run spec is validated first: a bad one is the error, naming the point, the field and the value, and nothing runs. Then it answers at once with the sweep\'s folder; the runs go on in the background of this server (at most max_concurrent at once) and stop with it, each saving a resume point. Calling it again resumes the sweep: finished runs are skipped, interrupted ones resumed. Follow it with sweep_status.',
    input: StartSweepInput,
    confirm: true,
    run: (s, a) => startSweep(s, a),
  }),
  tool({
    name: 'sweep_status',
    title: 'Sweep status',
    description: "A sweep's progress (done/total, the runs in flight) and its runs ranked by the sweep's metric as a compact table: rank, run (named by its point), status (running, completed, stopped early, interrupted, queued), steps recorded, best value and its step, last value.",
    input: SweepStatusInput,
    confirm: false,
    run: (s, a) => sweepStatus(s, a),
  }),
  tool({
    name: 'registry_list',
    title: 'Model registry',
    description: "The workspace's model registry (tinker-models.json): every model version in a line (id name@vN, status candidate/staging/production/retired, sampler path, its latest suite figures with 95 % intervals, an expiring production checkpoint flagged), or one version in full: paths, base model, renderer, LoRA rank, training recipe, data, suite results, status history.",
    input: RegistryListInput,
    confirm: false,
    run: (s, a) => registryList(s, a),
  }),
  tool({
    name: 'registry_register',
    title: 'Register a model version',
    description: "Registers a checkpoint as the next version of a model (a candidate): a run folder's final checkpoint (its recipe, followed through warm starts, and the data files with line counts and sha256 are recorded) or a tinker:// sampler path. Writes tinker-models.json and MODELS.md.",
    input: RegistryRegisterInput,
    confirm: true,
    run: (s, a) => registryRegister(s, a),
  }),
  tool({
    name: 'registry_promote',
    title: 'Promote a model version',
    description:
      "Moves a model version to staging, or to production through the promotion gate: the registry's gate suite must have a current, complete result for it and for the production version, and every entry's gate (non-inferiority paired on the same items, floors, ceilings) must pass; otherwise the answer is the refusal with every reason and number, and nothing changes. run_suite runs the suite where a result is missing or stale. anyway (a written reason) promotes past a refusal; the history keeps the reason and the refusals. The production version it replaces is retired.",
    input: RegistryPromoteInput,
    confirm: true,
    run: (s, a, signal) => registryPromote(s, a, signal),
  }),
  tool({
    name: 'registry_retire',
    title: 'Retire a model version',
    description: 'Retires a model version (a production one leaves its model without a production version); the history keeps who and why.',
    input: RegistryRetireInput,
    confirm: true,
    run: (s, a) => registryRetire(s, a),
  }),
  tool({
    name: 'export_checkpoint',
    title: 'Export a checkpoint',
    description:
      "Exports a checkpoint (a tinker:// path, downloaded first, or a downloaded folder) to serve it outside Tinker: kind adapter writes a PEFT adapter folder; kind merge merges it into the base model's Hugging Face folder (base), fp32 add, each tensor in its dtype, shards of at most 10 GB. Both with a model card. Refuses DeepSeek V3 adapters and Kimi INT4 / DeepSeek FP8 bases by name.",
    input: ExportCheckpointInput,
    confirm: true,
    run: (s, a, signal) => exportCheckpointTool(s, a, signal),
  }),
  tool({
    name: 'publish_to_hub',
    title: 'Publish to the Hugging Face Hub',
    description:
      'Publishes an exported folder, or a tinker:// checkpoint (exported as a PEFT adapter first), to a Hugging Face model repo (owner/name): private unless public is true; an existing repo is updated only when its card names the same checkpoint. The model card is the Tinker SDK push-hf card (tags tinker, peft, lora, base_model:adapter:<base>; tinker_path). Needs the user\'s Hugging Face token (SecretStorage or HF_TOKEN). Answers with the repo URL; the publish is recorded on the registry\'s version of the checkpoint.',
    input: PublishToHubInput,
    confirm: true,
    run: (s, a, signal) => publishToHubTool(s, a, signal),
  }),
  tool({
    name: 'finish',
    title: 'Finish the session',
    description: 'Saves the final checkpoint from the live training client, closes the session and its clients; returns a summary and the final sampler path.',
    input: z.object({}),
    confirm: true,
    run: (s) => s.finish(),
  }),
];

/**
 * init_<id> and train_<id>_step of a kind registered at run time (registerKind), served by the
 * session's kind-generic init and train; the built-in kinds' own tools above say more of each.
 */
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

/** The agent tool table as it stands now: AGENT_TOOLS, then the tools of each kind registered in the kinds table. */
export function agentTools(): AgentTool[] {
  return [...AGENT_TOOLS, ...registeredRunKinds().flatMap(kindTools)];
}

/** The tool called `name` in the table now; undefined when there is none. */
export function agentTool(name: string): AgentTool | undefined {
  return agentTools().find((t) => t.name === name);
}

/** The doctrine agents are asked to follow, in our words (served as an MCP prompt and resource). */
export const TRAINING_DOCTRINE = `How to train with these tools

1. Look before you train. After init_grpo, call sample on a handful of training prompts with their ground truths: if every completion scores 0, the task is too hard or the reward too strict; if every one scores 1, there is nothing to learn. Fix the reward or the data first, never train through a broken reward.
2. Small steps. Train 1–5 iterations per call and read each report before the next call.
3. Read the group breakdown, not only the mean. GRPO learns only from mixed groups (some samples better than others). Mostly ALL-0 groups: too hard, reward too strict or completions truncated (check the truncated fraction; raise max_tokens). Mostly ALL-1: converged or too easy — sample and consider stopping.
4. Reward errors are bugs. If a report lists reward errors, stop and fix the reward function.
5. Watch KL and entropy. A KL spike or oscillating reward: lower the learning rate. Flat reward with a tiny KL: the learning rate may be too low.
6. Change one thing at a time, and save a named checkpoint before a risky change so you can load it back.
7. SFT first when "good" cannot be checked by a function, or to teach the response format a reward needs; then GRPO from its checkpoint (load). In SFT, watch validation NLL: rising while train NLL falls is overfitting.
8. Decide by evidence: metrics and samples. Finish with finish, which saves the final checkpoint and tells where the run directory is.`;
