// What an environment call gives back: a value (checked by the caller against the shape it expects)
// or what went wrong, as the reward runners report it (kind, message, traceback, line in the file).

export type EnvErrorKind = 'exception' | 'timeout' | 'crash' | 'invalid_result';

export interface EnvCallError {
  kind: EnvErrorKind;
  message: string;
  traceback?: string;
  line?: number;
  column?: number;
  /** the raw value, for invalid_result */
  raw?: string;
}

export type EnvCallOutcome = { ok: true; value: unknown; durationMs: number } | { ok: false; error: EnvCallError; durationMs: number };

/** A dead worker's description (message, traceback, line) as an error's fields, with no undefined values. */
export function crashError(d: { message: string; traceback?: string | undefined; line?: number | undefined }): Pick<EnvCallError, 'message' | 'traceback' | 'line'> {
  return { message: d.message, ...(d.traceback !== undefined ? { traceback: d.traceback } : {}), ...(d.line !== undefined ? { line: d.line } : {}) };
}
