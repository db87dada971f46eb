// What the Preference Pairs panel shows, read from disk without `vscode`: the pairs of a file, or of a
// DPO run (its dataset file, found through config.json) with each pair's implicit reward margin from
// the run's iteration_NNNNNN/pairs.jsonl files (the first measurement and the latest).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import type { Message } from '../render/types';
import type { MarginUpdate, PairRow } from '../../protocol/pairsProtocol';
import { iterationDirName } from '../runs/runWriter';
import { parseRunConfig, runConfigFile } from '../runs/runConfig';
import { runKindOfConfig } from '../spec/kinds';
import { PAIR_MARGINS_FILE } from './loop';
import { readPairsFile, type PreferencePair } from './pairs';
import { labelOf } from './start';

const MarginLine = z.object({ pair: z.string(), split: z.enum(['train', 'validation']), margin: z.number() });

/** A completion or a prompt as one text (each message's content; a role is named when there are several or it is not the assistant's). */
export function messagesText(ms: readonly Message[]): string {
  if (ms.length === 1 && (ms[0]!.role === 'assistant' || ms[0]!.role === 'user')) return ms[0]!.content;
  return ms.map((m) => `[${m.role}] ${m.content}`).join('\n');
}

export function pairRow(p: PreferencePair): PairRow {
  return { id: p.id, prompt: messagesText(p.prompt), chosen: messagesText(p.chosen), rejected: messagesText(p.rejected), start: null, now: null, step: null };
}

export interface PairsOfRun {
  pairsFile: string;
  label: string;
  beta?: number;
}

/** Whether a run directory is a DPO run (its config.json's run_kind); false for one whose config cannot be read. */
export function isDpoRun(runDir: string): boolean {
  try {
    return runKindOfConfig(parseRunConfig(fs.readFileSync(runConfigFile(runDir), 'utf8'), runConfigFile(runDir))) === 'dpo';
  } catch {
    return false; // no config.json yet, or not ours: not a run to show pairs of
  }
}

/** A DPO run's pairs file and how its pair ids name it, from config.json. */
export function pairsOfRun(runDir: string): PairsOfRun {
  const file = path.join(runDir, 'config.json');
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`${file}: cannot read the run's config (${(err as Error).message})`);
  }
  if (config['run_kind'] !== 'dpo') throw new Error(`${runDir} is not a DPO run (config.json run_kind is ${JSON.stringify(config['run_kind'] ?? null)})`);
  const dataset = config['dataset'] as { path?: unknown } | undefined;
  if (typeof dataset?.path !== 'string') throw new Error(`${file}: dataset.path is missing`);
  const specFile = typeof config['spec_file'] === 'string' ? config['spec_file'] : undefined;
  const specDir = specFile ? path.dirname(specFile) : runDir;
  const beta = typeof config['dpo_beta'] === 'number' ? config['dpo_beta'] : undefined;
  return { pairsFile: path.resolve(specDir, dataset.path), label: labelOf(dataset.path, specDir), ...(beta !== undefined ? { beta } : {}) };
}

/** The pairs of a file, as rows (ids `<label>:<line>`), with its bad lines. */
export async function readPairRows(file: string, label = path.basename(file)): Promise<{ rows: PairRow[]; skipped: Array<{ where: string; reason: string }> }> {
  const { pairs, skipped } = await readPairsFile(file, label, 'skip');
  return { rows: pairs.map(pairRow), skipped };
}

/**
 * The margins a run wrote in steps ≥ `fromStep`, one update per pair: its first margin in those steps
 * as `start`, the last as `now`. Unreadable lines are skipped (a step being written is read again later).
 * Returns the next step to read from (one past the last step directory read completely).
 */
export function readRunMargins(runDir: string, fromStep = 0): { updates: MarginUpdate[]; nextStep: number } {
  const steps = fs.existsSync(runDir)
    ? fs
        .readdirSync(runDir)
        .map((d) => /^iteration_(\d+)$/.exec(d))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => Number(m[1]))
        .filter((s) => s >= fromStep)
        .sort((a, b) => a - b)
    : [];
  const byId = new Map<string, MarginUpdate>();
  let nextStep = fromStep;
  for (const s of steps) {
    const file = path.join(runDir, iterationDirName(s), PAIR_MARGINS_FILE);
    if (!fs.existsSync(file)) continue;
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch {
        continue;
      }
      const m = MarginLine.safeParse(v);
      if (!m.success) continue;
      const u = byId.get(m.data.pair);
      if (u) {
        u.now = m.data.margin;
        u.step = s;
      } else byId.set(m.data.pair, { id: m.data.pair, split: m.data.split, start: m.data.margin, now: m.data.margin, step: s });
    }
    nextStep = s + 1;
  }
  return { updates: [...byId.values()], nextStep };
}
