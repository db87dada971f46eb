// The Tinker sessions a run used, one line per start or resume in sessions.jsonl of its run
// directory: the service attributes its usage by session id (billing route, §9.9), so reconciling a
// run's tokens needs every session it ran in. Appended, never rewritten: a resume adds a line.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import { readIfExists } from '../fs/read';
import { parseRecords } from './runDirectory';
import type { JsonlProblem } from './jsonl';

export const RunSession = z.looseObject({
  session_id: z.string().min(1),
  /** when the session was created (ISO 8601): where the service's usage of the run begins */
  started_at: z.string().refine((s) => Number.isFinite(Date.parse(s)), 'not an ISO 8601 time'),
  /** the server it was created on (no key, no query) */
  base_url: z.string().optional(),
});
export type RunSession = z.infer<typeof RunSession>;

export function runSessionsFile(runDir: string): string {
  return path.join(runDir, 'sessions.jsonl');
}

/** A server URL as a run directory may keep it: no user, password, query or fragment. */
function withoutSecrets(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`.replace(/\/+$/, '');
  } catch {
    return '';
  }
}

/** Adds the session a start or resume of the run opened (once: the same id is not recorded twice). */
export function recordRunSession(runDir: string, session: RunSession): void {
  const file = runSessionsFile(runDir);
  if (session.base_url) session = { ...session, base_url: withoutSecrets(session.base_url) };
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  if (parseRecords(text, file, RunSession).records.some((s) => s.session_id === session.session_id)) return;
  // a line cut short by a crash is ended first, so the new record stays a line of its own
  fs.appendFileSync(file, `${text && !text.endsWith('\n') ? '\n' : ''}${JSON.stringify(session)}\n`);
}

/** The run's sessions in the order they were opened, and the lines that are none. */
export async function readRunSessions(runDir: string): Promise<{ sessions: RunSession[]; problems: JsonlProblem[] }> {
  const file = runSessionsFile(runDir);
  const text = await readIfExists(file);
  if (text === undefined) return { sessions: [], problems: [] };
  const r = parseRecords(text, file, RunSession);
  return { sessions: r.records, problems: r.problems };
}
