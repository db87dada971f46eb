// Dataset records too long for the model's context, found before training: the service refuses such
// a datum mid-run ("datum 0: … tokens is longer than the model's context"), which names neither the
// file nor the line. A record longer than the context is an invalid line like any other: it stops
// the run naming its file:line, or is left out and reported, as dataset.on_invalid_line says.
import type { ServiceClient } from '../tinker/client';
import { DatasetError } from './problem';

/** The model's context length as the service reports it; undefined (nothing checked) when it gives none. */
export async function contextOf(service: Pick<ServiceClient, 'contextLength'>, model: string, signal?: AbortSignal): Promise<number | undefined> {
  try {
    return await service.contextLength(model, signal);
  } catch {
    signal?.throwIfAborted();
    // an unreachable service says so at its first request; a missing figure only skips this check
    return undefined;
  }
}

export interface ContextFitOptions<T> {
  /** the model's context length as the service reports it; undefined: nothing is checked */
  context: number | undefined;
  policy: 'skip' | 'stop';
  /** the tokens the record sends in one sequence (rendered as the run renders it) */
  tokens(record: T): number;
  /** what a record is, for the hint: "chat", "pair" */
  record: string;
}

/** The train and validation records that fit the context, and the ones left out (policy "skip"). */
export function fitContext<T extends { id: string }>(split: { train: T[]; validation: T[] }, o: ContextFitOptions<T>): { train: T[]; validation: T[]; skipped: Array<{ where: string; reason: string }> } {
  const skipped: Array<{ where: string; reason: string }> = [];
  if (o.context === undefined) return { ...split, skipped };
  const context = o.context;
  const fits = (r: T): boolean => {
    const n = o.tokens(r);
    if (n <= context) return true;
    const reason = `${n} tokens, too long for the model's context of ${context}`;
    if (o.policy === 'stop') throw new DatasetError(`${r.id}: ${reason} (set max_length to cut long ${o.record}s, or dataset.on_invalid_line to "skip" to leave such lines out)`);
    skipped.push({ where: r.id, reason });
    return false;
  };
  return { train: split.train.filter(fits), validation: split.validation.filter(fits), skipped };
}
