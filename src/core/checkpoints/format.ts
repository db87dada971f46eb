// How a checkpoint's facts read to a person: its kind, expiry ("expires in 2 days"), size, and TTL
// durations typed by a person ("7d", "12h", "3600").
import type { Checkpoint } from '../tinker/wire';

/**
 * What a checkpoint is to a person: training state, sampler weights, or a type the server reports
 * that has neither role here ("external": weights uploaded or saved outside a training run; or a
 * newer type), shown as the server names it.
 */
export type CheckpointKind = 'state' | 'sampler' | 'external' | (string & {});

export function kindOfServerCheckpoint(c: Pick<Checkpoint, 'checkpoint_type'>): CheckpointKind {
  return c.checkpoint_type === 'training' ? 'state' : c.checkpoint_type;
}

/** Whether the kind is one Tinker Studio knows how to use (train from, resume, sample). */
export function isKnownKind(kind: CheckpointKind): kind is 'state' | 'sampler' {
  return kind === 'state' || kind === 'sampler';
}

const UNITS: Array<[string, number]> = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
];

/** "2 days", "5 hours", "40 seconds": the time in the largest unit it fills, rounded to the nearest. */
export function durationText(ms: number): string {
  for (const [unit, size] of UNITS) {
    if (ms < size) continue;
    const n = Math.round(ms / size);
    return `${n} ${unit}${n === 1 ? '' : 's'}`;
  }
  return 'less than a second';
}

/** "expires in 2 days", "expired", or undefined when the checkpoint does not expire. */
export function expiryText(expiresAt: Date | undefined, now: Date): string | undefined {
  if (!expiresAt) return undefined;
  const left = expiresAt.getTime() - now.getTime();
  return left <= 0 ? 'expired' : `expires in ${durationText(left)}`;
}

/** Bytes in the largest unit that keeps the number at least 1 (1024-based, one decimal). */
export function sizeText(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${bytes} B` : `${v.toFixed(1)} ${units[i]}`;
}

/**
 * A TTL typed by a person in seconds: "3600", "90s", "30m", "12h", "7d", "2w". Throws with what to
 * type instead; zero and negative durations are refused (clearing the TTL is its own action).
 */
export function parseTtl(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$/i.exec(text);
  if (!m) throw new Error(`"${text}" is not a duration: type a number of seconds, or a number with s, m, h, d or w (e.g. 7d)`);
  const factor = { '': 1, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }[m[2]!.toLowerCase()]!;
  const seconds = Math.round(Number(m[1]) * factor);
  if (!(seconds > 0)) throw new Error('the TTL must be at least one second (to remove the expiry, clear the TTL)');
  return seconds;
}

export function parseDate(text: string | null | undefined): Date | undefined {
  if (!text) return undefined;
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? undefined : d;
}
