// Where a resumed run continues, and what an interrupted attempt left past that point. A cancel saves
// a resume point at exactly the steps written (loopRuntime.ts saveResumePoint), so nothing is left
// over; a process killed outright (kill -9, a crash, a lost machine) leaves the steps it ran after its
// last state checkpoint. The resume trains those steps again, so their rows and iteration folders are
// moved aside before it starts: the run's record shows each step once, as after a cancel, and what
// the abandoned attempt wrote is kept for a look, never merged into the run.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CheckpointRecord } from './runDirectory';
import { writeFileAtomicSync } from '../fs/atomic';
import type { RunWriter } from './runWriter';

/** The folder of a run directory that holds what interrupted attempts left (one subfolder per resume). */
export const ABANDONED_DIR = 'abandoned';

/** Rows keyed by step, one JSON object a line. */
const STEP_FILES = ['metrics.jsonl', 'timing_spans.jsonl'];

/** A temporary file of a whole-file write (fs/atomic.ts, runWriter.ts): `.<name>.<pid>.<n>.tmp`. */
const TEMP_FILE = /^\..+\.\d+\.\d+\.tmp$/;

export interface SetAside {
  /** the subfolder the leftovers went to, when there were any */
  dir?: string;
  /** the steps whose rows or iteration folders were moved */
  steps: number[];
  /** temporary files of interrupted writes, removed */
  tempFiles: number;
}

/**
 * The checkpoint a resumed run continues from (its last state checkpoint; none: step 0), after moving
 * aside what an earlier attempt wrote past it (setAsideAfter). `log` says what was moved.
 */
export function resumePoint(resume: RunWriter | undefined, log: (line: string) => void): CheckpointRecord | undefined {
  if (!resume) return undefined;
  const from = resume.lastStateCheckpoint();
  const step = from?.batch ?? 0;
  const moved = setAsideAfter(resume, step);
  if (moved.steps.length > 0 || moved.tempFiles > 0) {
    const steps = moved.steps.length > 0 ? `the rows and iteration folders of step${moved.steps.length > 1 ? 's' : ''} ${stepsText(moved.steps)} that an interrupted attempt ran past the resume point (moved to ${path.relative(resume.dir, moved.dir!)}/: they are trained again)` : '';
    const temps = moved.tempFiles > 0 ? `${moved.tempFiles} temporary file${moved.tempFiles > 1 ? 's' : ''} of interrupted writes (removed)` : '';
    const line = `resuming at step ${step}: set aside ${[steps, temps].filter(Boolean).join('; ')}`;
    log(line);
    resume.appendLog(`${new Date().toISOString()} ${line}`);
  }
  return from;
}

/**
 * Moves the rows of steps ≥ `step` (metrics.jsonl, timing_spans.jsonl) and the iteration folders
 * from `step` on into `abandoned/<time>/`, and removes temporary files of interrupted writes. The run
 * directory must be locked by `writer` (no other process writes it).
 */
export function setAsideAfter(writer: RunWriter, step: number, at = new Date()): SetAside {
  const runDir = writer.dir;
  const target = path.join(runDir, ABANDONED_DIR, at.toISOString().replace(/[:.]/g, '-'));
  const steps = new Set<number>();
  const ensure = () => fs.mkdirSync(target, { recursive: true });
  for (const name of STEP_FILES) {
    const file = path.join(runDir, name);
    if (!fs.existsSync(file)) continue;
    const keep: string[] = [];
    const past: string[] = [];
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const s = stepOf(line);
      if (s !== undefined && s >= step) {
        past.push(line);
        steps.add(s);
      } else keep.push(line);
    }
    if (past.length === 0) continue;
    ensure();
    fs.appendFileSync(path.join(target, name), past.map((l) => `${l}\n`).join(''));
    writeFileAtomicSync(file, keep.map((l) => `${l}\n`).join(''));
  }
  let tempFiles = removeTempFiles(runDir);
  for (const entry of fs.readdirSync(runDir, { withFileTypes: true })) {
    const m = /^iteration_(\d+)$/.exec(entry.name);
    if (!entry.isDirectory() || !m) continue;
    const dir = path.join(runDir, entry.name);
    if (Number(m[1]) < step) {
      tempFiles += removeTempFiles(dir);
      continue;
    }
    ensure();
    fs.renameSync(dir, path.join(target, entry.name));
    steps.add(Number(m[1]));
  }
  return { ...(steps.size > 0 ? { dir: target } : {}), steps: [...steps].sort((a, b) => a - b), tempFiles };
}

function stepOf(line: string): number | undefined {
  try {
    const v = JSON.parse(line) as { step?: unknown };
    return typeof v.step === 'number' ? v.step : undefined;
  } catch {
    return undefined;
  }
}

function removeTempFiles(dir: string): number {
  let n = 0;
  for (const name of fs.readdirSync(dir)) {
    if (!TEMP_FILE.test(name)) continue;
    fs.rmSync(path.join(dir, name), { force: true });
    n++;
  }
  return n;
}

/** `3–7` for a run of steps, else `3, 5, 9` */
function stepsText(steps: readonly number[]): string {
  const contiguous = steps.every((s, i) => i === 0 || s === steps[i - 1]! + 1);
  return contiguous && steps.length > 2 ? `${steps[0]}–${steps[steps.length - 1]}` : steps.join(', ');
}
