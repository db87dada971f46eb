// A kind of run that exists only in the tests, to show that a kind arrives as its spec module, its
// loop and one row in the kinds table (registerKind), with no shared file edited: each step trains
// the next-token loss of one fixed text on the embedded engine and logs it as `toy/nll`.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import { defineKind } from '../../../src/core/training/runKind';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { getRenderer } from '../../../src/core/render/registry';
import { RunCore, type LoopIo, type RunCoreParts } from '../../../src/core/runs/loopRuntime';
import type { RunResultBase } from '../../../src/core/runs/runEvents';
import type { RunWriter } from '../../../src/core/runs/runWriter';
import { completedRun, resolveRunSpec, runToEnd, runWriterFor, type RunStartOptions } from '../../../src/core/runs/startParts';
import { resumePoint } from '../../../src/core/runs/resumePoint';
import { trackRun } from '../../../src/core/runs/runTracking';
import { RunSpecError } from '../../../src/core/spec/text';
import { SpanTimer } from '../../../src/core/runs/spanTimer';
import { COOKBOOK_ADAM } from '../../../src/core/tinker/adam';
import { textInput } from '../../../src/core/tinker/types';
import { RANDOM_MODEL } from '../../../src/engine/model/models';

const ToySpec = z.strictObject({
  name: z.string().optional(),
  backend: z.enum(['local', 'cloud', 'custom']).default('local'),
  base_url: z.string().optional(),
  model: z.string().default(RANDOM_MODEL),
  lora_rank: z.number().int().min(1).default(4),
  learning_rate: z.number().positive().default(1e-3),
  steps: z.number().int().min(1).default(2),
  seed: z.number().int().default(0),
  text: z.string().min(2).default('toy kinds arrive as one row'),
  // a sweep names each run in W&B (the fields every kind's spec accepts)
  wandb_group: z.string().optional(),
  wandb_name: z.string().optional(),
});
export type ToySpec = z.output<typeof ToySpec> & { name: string };

export interface ToyRunResult extends RunResultBase {
  kind: 'toy';
  lastNll?: number;
}

function parseToyValue(value: unknown, file: string): { spec: ToySpec } {
  const r = ToySpec.safeParse(value);
  if (!r.success) throw new RunSpecError(r.error.issues.map((i) => `${file}: ${i.path.join('.') || '(spec)'}: ${i.message}`));
  return { spec: { ...r.data, name: r.data.name ?? path.basename(file).replace(/\.toy\.json$/i, '') } };
}

/** The spec keys of a run's config.json. */
function toyFromConfig(config: unknown, where: string): ToySpec {
  const c = (typeof config === 'object' && config !== null ? config : {}) as Record<string, unknown>;
  const own = Object.fromEntries(Object.keys(ToySpec.shape).filter((k) => c[k] !== undefined).map((k) => [k, c[k]]));
  return parseToyValue(own, where).spec;
}

const TOY_SPEC = {
  schema: ToySpec,
  parseFile: async (file: string) => parseToyValue(JSON.parse(await fs.promises.readFile(file, 'utf8')), file),
  parseValue: async (value: unknown, file: string) => parseToyValue(value, file),
  fromConfig: toyFromConfig,
  resumable: ['steps'],
};

class ToyRun extends RunCore<ToyRunResult> {
  readonly kind = 'toy';
  readonly unit = 'steps';
  private lastNll: number | undefined;

  constructor(
    parts: RunCoreParts,
    private readonly spec: ToySpec,
  ) {
    super(parts, { model: spec.model, loraRank: spec.lora_rank, seed: spec.seed, rendererName: 'chatml' }, spec.steps);
  }

  protected override startLine(): string {
    return `toy ${this.spec.model}, ${this.spec.steps} steps`;
  }

  protected override async step_(s: number, io: LoopIo): Promise<void> {
    const timer = new SpanTimer();
    const t0 = performance.now();
    const tokens = [...new TextEncoder().encode(this.spec.text)];
    const datum = {
      model_input: textInput(tokens.slice(0, -1)),
      loss_fn_inputs: { target_tokens: { dtype: 'int64' as const, data: tokens.slice(1) }, weights: { dtype: 'float32' as const, data: tokens.slice(1).map(() => 1) } },
    };
    const trainer = this.trainer!;
    const [fb] = await timer.time('train_step', async () => {
      const fbSubmitted = trainer.forwardBackward([datum], 'cross_entropy');
      const optSubmitted = trainer.optimStep({ learning_rate: this.spec.learning_rate, ...COOKBOOK_ADAM });
      const [f, o] = await Promise.all([fbSubmitted, optSubmitted]);
      return Promise.all([f.result(), o.result()]);
    });
    const logprobs = [...fb.loss_fn_outputs[0]!['logprobs']!.data];
    this.lastNll = -logprobs.reduce((a, b) => a + b, 0) / logprobs.length;
    await this.finishSupervisedStep(s, { 'toy/nll': this.lastNll, 'optim/lr': this.spec.learning_rate }, io, { timer, t0 }, { trainer, saveEvery: 0, ttlSeconds: undefined, signal: undefined });
  }

  protected override result(base: Omit<RunResultBase, 'kind'>): ToyRunResult {
    return { kind: 'toy', ...base, ...(this.lastNll !== undefined ? { lastNll: this.lastNll } : {}) };
  }
}

async function prepareToyRun(o: RunStartOptions<ToySpec>, resume: RunWriter | undefined, writers: RunWriter[]) {
  const spec = await resolveRunSpec<ToySpec>(o, resume, { file: (f) => TOY_SPEC.parseFile(f), config: TOY_SPEC.fromConfig, resumable: TOY_SPEC.resumable }, 'startToyRun');
  const done = completedRun('toy', resume, { log: o.log, onEvent: o.onEvent });
  if (done) return { done };
  const renderer = getRenderer('chatml', new ByteTokenizer());
  const service = await o.connect(spec);
  const writer = runWriterFor({ resume, writers, runsDir: o.runsDir, specFile: o.specFile ? path.resolve(o.specFile) : undefined, runDir: o.runDir, configExtra: o.configExtra }, spec, { rendererName: renderer.name, learningRate: spec.learning_rate, run_kind: 'toy' });
  const tracked = trackRun(o.tracking, writer, spec, { kind: 'toy', model: spec.model, renderer: renderer.name, backend: spec.backend, lora_rank: spec.lora_rank, learning_rate: spec.learning_rate }, o.log ?? (() => undefined));
  const run = new ToyRun({ service, writer, resumeFrom: resumePoint(resume, o.log ?? (() => undefined)), ...(o.log ? { log: o.log } : {}) }, spec);
  return {
    run,
    spec,
    renderer,
    close: async () => {
      service.close();
      await tracked?.finish();
    },
  };
}

export const TOY_KIND = defineKind<ToySpec, ToyRunResult>({
  row: {
    id: 'toy',
    label: 'Toy',
    aRun: 'a Toy run',
    extension: '.toy.json',
    unit: { one: 'step', many: 'steps' },
    fallbackName: 'toy',
    startCommand: 'tinker.startToyRun',
    schemaFile: 'toy-spec.schema.json',
    runsWorkspaceCode: false,
  },
  spec: async () => TOY_SPEC,
  start: (o) => runToEnd<ToyRunResult>(o.resumeDir, (resume, writers) => prepareToyRun(o, resume, writers), o),
  prepare: prepareToyRun,
  runsWorkspaceCode: () => false,
  metrics: () => ({ keys: ['toy/nll'], prefixes: ['optim/', 'time/', 'progress/'] }),
  seedField: 'seed',
  outcome: (r) => (r.lastNll !== undefined ? `; toy NLL ${r.lastNll.toFixed(3)}` : ''),
  cliReport: (r) => `toy/nll ${r.lastNll?.toFixed(4) ?? '–'}\n`,
  compareColumns: [{ id: 'finalToyNll', label: 'final toy NLL', metric: 'toy/nll', pick: 'last' }],
  agent: {
    describe: (spec) => `Toy ${spec.name} on ${spec.model}, ${spec.steps} steps of "${spec.text}"`,
    report: (o) => ({ text: `steps ${o.firstStep}–${o.lastStep} of ${o.stepsTotal} done\nrun directory: ${o.runDir}`, value: { run_dir: o.runDir, first_step: o.firstStep, last_step: o.lastStep } }),
    lengthFields: '"steps"',
  },
});
