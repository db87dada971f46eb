// A sweep file (`*.sweep.json`, or `*.sweep.yaml` / `.yml` read with the `yaml` package): the shape W&B users write (method, parameters, metric, run_cap, seed,
// early_terminate) plus `base` (a run spec file, relative to the sweep file), `seeds` and
// `max_concurrent`. Definitions: docs experiments-reference.md "Sweep files".
import * as fs from 'fs';
import * as path from 'path';
import * as z from 'zod';
import { RunSpecError } from '../spec/text';
import { formatIssue } from '../spec/issues';
import { lineColumn, parsePlacedText, placeOf, specTextFormat, type SpecTextFormat } from '../spec/placedText';
import { SWEEP_FILE_EXTENSIONS } from '../spec/kinds';
import { specJsonSchema } from '../spec/define';
import { SweepMetric } from './sweepManifest';

const Scalar = z.union([z.number(), z.string(), z.boolean(), z.null()]);
const Value = z.union([Scalar, z.array(z.unknown()), z.record(z.string(), z.unknown())]);

export const SweepParameter = z.union([
  z.strictObject({ value: Value.describe('A constant: every run takes this value.') }),
  z.strictObject({ values: z.array(Value).min(1).describe('A list: grid takes each, random draws one uniformly.') }),
  z.strictObject({ distribution: z.literal('categorical'), values: z.array(Value).min(1) }),
  z.strictObject({ distribution: z.enum(['uniform', 'int_uniform', 'log_uniform_values']), min: z.number(), max: z.number() }),
  z.strictObject({ distribution: z.literal('q_uniform'), min: z.number(), max: z.number(), q: z.number().positive().default(1) }),
]);
export type SweepParameter = z.output<typeof SweepParameter>;

export const SweepFile = z
  .strictObject({
    base: z.string().min(1).describe('The run spec every point starts from (a *.grpo.json or *.sft.json file, relative to the sweep file).'),
    name: z.string().regex(/^[A-Za-z0-9._-]+$/).optional().describe('The sweep folder under the runs folder (default: the file name without .sweep.json).'),
    method: z.enum(['grid', 'random']).describe('grid: every combination of the parameters\' values; random: run_cap points drawn with the generator seeded by `seed`.'),
    parameters: z.record(z.string().min(1), SweepParameter).describe('Fields of the base spec by dot path (e.g. "learning_rate", "dataset.limit").'),
    metric: SweepMetric.describe('The metric runs are ranked (and early-stopped) by.'),
    run_cap: z.number().int().min(1).optional().describe('random: how many points to draw (required); grid: at most this many points.'),
    seed: z.number().int().min(0).default(0).describe('Seeds the random method\'s generator: the same file gives the same points.'),
    seeds: z.array(z.number().int().min(0)).min(1).optional().describe('Repeat every point with each of these sampling seeds.'),
    max_concurrent: z.number().int().min(1).optional().describe('Runs at once (default 1 on the embedded engine, 4 on cloud/custom).'),
    early_terminate: z
      .strictObject({ type: z.literal('median'), min_iter: z.number().int().min(0).default(1), min_runs: z.number().int().min(1).default(3) })
      .optional()
      .describe('The median stopping rule: at each step ≥ min_iter, stop a run whose best-so-far metric is worse than the median of at least min_runs other runs at that step (completed runs count at every later step, runs stopped early only at the steps they reached).'),
    max_cost_usd: z.number().gt(0).optional().describe("The sweep's budget in US dollars (estimate: tokens × the price table, `tinker.prices`), shared by its runs: no run starts a step that would take the sweep's total past it; a stopped run keeps a resume point, and running the sweep again with a higher budget continues."),
    max_tokens_total: z.number().int().min(1).optional().describe("The sweep's budget in tokens (training, prefill, cached prefill and sampled, all its runs), shared as max_cost_usd."),
  })
  .superRefine((s, ctx) => {
    if (s.method === 'random' && s.run_cap === undefined) ctx.addIssue({ code: 'custom', path: ['run_cap'], message: 'method "random" needs run_cap (how many points to draw)' });
    for (const [key, p] of Object.entries(s.parameters)) {
      if (s.method === 'grid' && 'distribution' in p) ctx.addIssue({ code: 'custom', path: ['parameters', key, 'distribution'], message: `method "grid" takes value or values; parameter "${key}" has distribution "${p.distribution}" (use method "random")` });
      if ('min' in p && p.min > p.max) ctx.addIssue({ code: 'custom', path: ['parameters', key, 'min'], message: `min ${p.min} is above max ${p.max}` });
      if ('distribution' in p && p.distribution === 'log_uniform_values' && p.min <= 0) ctx.addIssue({ code: 'custom', path: ['parameters', key, 'min'], message: 'log_uniform_values needs min > 0' });
      if ('distribution' in p && p.distribution === 'int_uniform' && (!Number.isInteger(p.min) || !Number.isInteger(p.max))) ctx.addIssue({ code: 'custom', path: ['parameters', key], message: 'int_uniform needs integer min and max' });
    }
  })
  .describe('A hyperparameter sweep over a base run spec (W&B sweep file shape).');
export type SweepFile = z.output<typeof SweepFile>;

export const SWEEP_EXTENSIONS = SWEEP_FILE_EXTENSIONS;
export { isSweepFile } from '../spec/kinds';

/** The sweep's name: its `name`, else the file name without `.sweep.json` / `.sweep.yaml` / `.sweep.yml`. */
export function sweepName(file: string, s: Pick<SweepFile, 'name'>): string {
  if (s.name) return s.name;
  const base = path.basename(file).replace(/\.sweep\.(json|ya?ml)$/i, '');
  return base.replace(/[^A-Za-z0-9._-]/g, '_') || 'sweep';
}

/**
 * Parses and validates sweep text (JSON, or YAML when `fileLabel` ends in .yaml/.yml); every message
 * reads `<fileLabel>:<line>:<column>: <field>: <what is wrong>`. Throws RunSpecError.
 */
export function parseSweepText(text: string, fileLabel: string, format: SpecTextFormat = specTextFormat(fileLabel)): SweepFile {
  const parsed = parsePlacedText(text, format);
  if (!parsed.ok) {
    const at = lineColumn(text, parsed.error.offset);
    throw new RunSpecError([`${fileLabel}${parsed.error.length ? `:${at.line}:${at.column}` : ''}: ${parsed.error.message}`]);
  }
  const r = SweepFile.safeParse(parsed.value, { reportInput: true });
  if (!r.success)
    throw new RunSpecError(
      r.error.issues.map((i) => {
        const place = placeOf(parsed.places, i.code === 'unrecognized_keys' ? [...i.path, i.keys[0]!] : i.path);
        const at = lineColumn(text, (place.key?.offset ?? place.value) + parsed.shift);
        return `${fileLabel}:${at.line}:${at.column}: ${formatIssue(i, SweepFile)}`;
      }),
    );
  return r.data;
}

export function readSweepFile(file: string): SweepFile {
  const abs = path.resolve(file);
  let text: string;
  try {
    text = fs.readFileSync(abs, 'utf8');
  } catch (err) {
    throw new RunSpecError([`${abs}: ${(err as Error).message}`]);
  }
  return parseSweepText(text, abs);
}

export function sweepJsonSchema(): Record<string, unknown> {
  return specJsonSchema(SweepFile);
}
