// Files the registry tests read: run folders in the layout the run writer leaves (config.json,
// metrics.jsonl, checkpoints.jsonl), a suite file and crafted suite results for the gate.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import type { SuiteResult } from '../../../src/core/suite/contract';
import { loadSuite, readSuiteResult, SUITE_RESULT_FILE, suiteResultDir } from '../../../src/core/suite/store';

export function writeRun(dir: string, o: { kind: string; config: Record<string, unknown>; steps: number; checkpoints: Record<string, unknown>[] }): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ run_kind: o.kind, ...o.config }, null, 2));
  fs.writeFileSync(path.join(dir, 'metrics.jsonl'), Array.from({ length: o.steps }, (_, i) => JSON.stringify({ step: i, loss: 1 / (i + 1) })).join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'checkpoints.jsonl'), o.checkpoints.map((c) => JSON.stringify(c)).join('\n') + '\n');
  return dir;
}

/** An SFT run, then a GRPO run warm-started from its final state: the recipe SFT → GRPO. */
export function sftThenGrpo(root: string): { sftDir: string; grpoDir: string; chats: string; problems: string } {
  const specDir = path.join(root, 'specs');
  fs.mkdirSync(specDir, { recursive: true });
  const chats = path.join(specDir, 'chats.jsonl');
  fs.writeFileSync(chats, '{"messages":[]}\n{"messages":[]}\n{"messages":[]}\n');
  const problems = path.join(specDir, 'train.jsonl');
  fs.writeFileSync(problems, '{"question":"1+1","answer":"2"}\n{"question":"2+2","answer":"4"}\n');
  const sftDir = writeRun(path.join(root, 'runs', 'format-sft'), {
    kind: 'sft',
    config: { name: 'format-sft', model_name: 'tinker-studio/arith-gpt', renderer_name: 'chatml', lora_rank: 8, learning_rate: 0.004, lr_schedule: 'cosine', max_steps: 48, spec_file: path.join(specDir, 'format.sft.json'), dataset: { path: 'chats.jsonl' } },
    steps: 48,
    checkpoints: [{ name: 'final', batch: 48, final: true, state_path: 'tinker://sft-run/weights/final', sampler_path: 'tinker://sft-run/sampler_weights/final' }],
  });
  const grpoDir = writeRun(path.join(root, 'runs', 'format-grpo'), {
    kind: 'grpo',
    config: {
      name: 'format-grpo',
      model_name: 'tinker-studio/arith-gpt',
      renderer_name: 'chatml',
      lora_rank: 8,
      learning_rate: 0.001,
      iterations: 21,
      load_checkpoint_path: 'tinker://sft-run/weights/final',
      spec_file: path.join(specDir, 'format.grpo.json'),
      dataset: { path: 'train.jsonl', holdout: { path: 'train.jsonl' } },
      reward: { file: 'reward.py' },
    },
    steps: 21,
    checkpoints: [
      { name: '000010', batch: 10, state_path: 'tinker://grpo-run/weights/000010', sampler_path: 'tinker://grpo-run/sampler_weights/000010' },
      { name: 'final', batch: 21, final: true, state_path: 'tinker://grpo-run/weights/final', sampler_path: 'tinker://grpo-run/sampler_weights/final' },
    ],
  });
  return { sftDir, grpoDir, chats, problems };
}

export const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

/** A suite of two entries: pass@1 (maximize; non-inferiority 0.02 and a floor) and nll (minimize; a ceiling), reading `data.jsonl`. */
export function writeSuite(dir: string, gates?: { acc?: Record<string, number>; nll?: Record<string, number> }): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'data.jsonl'), '{"q":1}\n{"q":2}\n');
  const file = path.join(dir, 'gate.suite.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      entries: [
        { name: 'acc', eval: { name: 'acc', dataset: { path: 'data.jsonl' } }, layer: 'product', metric: 'pass@1', gate: gates?.acc ?? { non_inferiority: 0.02 } },
        { name: 'nll', eval: { name: 'nll', nll: { dataset: 'data.jsonl' } }, layer: 'training', gate: gates?.nll ?? { max: 5 } },
      ],
    }),
  );
  return file;
}

/**
 * Writes the stored result of the suite's current version for `checkpoint`: per item values for
 * acc (0/1 per problem) and nll (per chat), with estimates from their means.
 */
export async function writeResult(suiteFile: string, checkpoint: string, o: { acc: number[]; nll: number[]; complete?: boolean; dropEntry?: string }): Promise<SuiteResult> {
  const suite = await loadSuite(suiteFile);
  const data = fs.readFileSync(path.join(suite.dir, 'data.jsonl'));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const entry = (name: string, metric: string, goal: 'maximize' | 'minimize', layer: 'product' | 'training', xs: number[]) => ({
    name,
    layer,
    metric,
    goal,
    estimate: { value: mean(xs), lo: mean(xs) - 0.05, hi: mean(xs) + 0.05 },
    n: xs.length,
    per_item: Object.fromEntries(xs.map((x, i) => [`item-${String(i).padStart(3, '0')}`, x])),
    data: [{ file: 'data.jsonl', sha256: sha256(data), lines: 2 }],
    spec_sha256: sha256(name),
  });
  const r: SuiteResult = {
    kind: 'suite-result',
    version: 1,
    suite: { name: suite.name, version: suite.version, file: suite.file },
    checkpoint: { label: checkpoint, path: checkpoint, model: 'tinker-studio/arith-gpt' },
    entries: [entry('acc', 'pass@1', 'maximize', 'product', o.acc), entry('nll', 'nll', 'minimize', 'training', o.nll)].filter((e) => e.name !== o.dropEntry),
    complete: o.complete ?? true,
    created_at: '2026-11-28T10:00:00.000Z',
    updated_at: '2026-11-28T10:05:00.000Z',
  };
  const dir = suiteResultDir(suite, checkpoint);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, SUITE_RESULT_FILE), JSON.stringify(r));
  // read back through the store: the crafted file is what the runner would leave
  return (await readSuiteResult(suite, checkpoint))!;
}

/** n items of 0/1 with `ones` ones, spread over the items. */
export function bits(n: number, ones: number): number[] {
  return Array.from({ length: n }, (_, i) => (Math.floor(((i + 1) * ones) / n) > Math.floor((i * ones) / n) ? 1 : 0));
}
