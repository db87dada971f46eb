// Fixture builders for the GRPO tests in the extension host: a tiny arithmetic problem set, a
// Python reward function and a spec, written into a fresh temp folder.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

export interface TinySpecOptions {
  iterations?: number;
  name?: string;
  holdout?: boolean;
}

const REWARD_PY = `import re

def compute_reward(completion: str, ground_truth: str) -> float:
    numbers = re.findall(r"-?\\d+", completion)
    return 1.0 if numbers and int(numbers[-1]) == int(ground_truth) else 0.0
`;

/** A folder with train.jsonl, holdout.jsonl, reward.py and <name>.grpo.json; returns the spec path. */
export function writeTinySpec(o: TinySpecOptions = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-grpo-spec-'));
  const problems = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => {
      const a = from + i;
      const b = (a * 7) % 10;
      return JSON.stringify({ question: `What is ${a} + ${b}?`, answer: a + b });
    }).join('\n') + '\n';
  fs.writeFileSync(path.join(dir, 'train.jsonl'), problems(1, 8));
  fs.writeFileSync(path.join(dir, 'holdout.jsonl'), problems(20, 2));
  fs.writeFileSync(path.join(dir, 'reward.py'), REWARD_PY);
  const name = o.name ?? 'tiny';
  const spec = {
    name,
    backend: 'local',
    model: 'tinker-studio/arith-gpt',
    renderer: 'chatml',
    lora_rank: 4,
    groups_per_batch: 2,
    group_size: 2,
    max_tokens: 4,
    iterations: o.iterations ?? 2,
    save_every: 1,
    eval_every: o.holdout === false ? 0 : 1,
    dataset: { path: 'train.jsonl', ...(o.holdout === false ? {} : { holdout: { path: 'holdout.jsonl' } }) },
    reward: { file: 'reward.py' },
  };
  const file = path.join(dir, `${name}.grpo.json`);
  fs.writeFileSync(file, JSON.stringify(spec, null, 2) + '\n');
  return file;
}

/** Steps of a metrics.jsonl, merged per step (a resumed run may log a step twice). */
export function loggedSteps(runDir: string): number[] {
  const text = fs.readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8');
  const steps = new Set<number>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const m = /"step"\s*:\s*(\d+)/.exec(line);
    if (m) steps.add(Number(m[1]));
  }
  return [...steps].sort((a, b) => a - b);
}

/** One field of every line of a run directory's JSON-lines file, in file order (a repeated line shows twice); none when the file is missing. */
export function jsonlField<T>(runDir: string, file: string, field: string): T[] {
  const full = path.join(runDir, file);
  if (!fs.existsSync(full)) return [];
  return fs
    .readFileSync(full, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => (JSON.parse(l) as Record<string, T>)[field]!);
}

export function checkpointNames(runDir: string): string[] {
  return jsonlField<string>(runDir, 'checkpoints.jsonl', 'name');
}
