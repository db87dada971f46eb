// A suite file's problems where they are written, for the editor: syntax and schema errors at their
// field, then the rules the JSON schema cannot say: entry names unique, an eval file that exists and
// reads as an eval spec, an inline eval spec valid (its targets come from the suite's checkpoint), a
// primary metric the eval reports.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { diagnosticAt, diagnosticAtPath, issueDiagnostics, type SpecDiagnostic } from '../spec/diagnostics';
import { formatIssue } from '../spec/issues';
import { parsePlacedText } from '../spec/placedText';
import { RunSpecError } from '../spec/text';
import { EvalSpecSchema, parseEvalSpecFile } from '../evals/spec';
import { errorMessage } from '../errors';
import { SuiteFileSchema } from './contract';
import { parseSuiteValue } from './store';

const KNOWN_METRIC = /^(pass@[1-9]\d*|reward|nll)$/;

/** Every problem of a suite file's text (`file` names it: eval paths are relative to its folder). */
export async function suiteDiagnostics(text: string, file: string): Promise<SpecDiagnostic[]> {
  const parsed = parsePlacedText(text, 'json');
  if (!parsed.ok) return [diagnosticAt(text, parsed.error.offset, parsed.error.length, parsed.error.message)];
  const schemaProblems = issueDiagnostics(SuiteFileSchema, text, parsed);
  if (schemaProblems.length) return schemaProblems;
  const at = (p: PropertyKey[], message: string, value = false) => diagnosticAtPath(text, parsed, p, message, { rule: true, value });
  const raw = SuiteFileSchema.parse(parsed.value);
  const out: SpecDiagnostic[] = [];
  let suite: ReturnType<typeof parseSuiteValue> | undefined;
  try {
    suite = parseSuiteValue(parsed.value, file);
  } catch (err) {
    // names given twice: underline every entry after the first that uses one
    const names = raw.entries.map((e, i) => e.name ?? (typeof e.eval === 'string' ? path.basename(e.eval).replace(/\.eval\.json$/i, '').replace(/\.json$/i, '') : (typeof e.eval['name'] === 'string' && e.eval['name']) || `entry-${i + 1}`));
    names.forEach((n, i) => {
      if (names.indexOf(n) !== i) out.push(at(['entries', i, raw.entries[i]!.name !== undefined ? 'name' : 'eval'], `the entry name ${JSON.stringify(n)} is used twice: give each entry its own "name"`, true));
    });
    if (out.length === 0) out.push(at(['entries'], err instanceof RunSpecError ? err.problems.join('; ') : errorMessage(err)));
    return out;
  }
  for (const [i, e] of suite.entries.entries()) {
    const given = raw.entries[i]!;
    let nll = false;
    if (typeof given.eval === 'string') {
      const abs = e.evalFile!;
      const st = await fs.stat(abs).catch(() => undefined);
      if (!st?.isFile()) {
        out.push(at(['entries', i, 'eval'], `file "${given.eval}" not found (looked for ${abs})`, true));
        continue;
      }
      try {
        const loaded = await parseEvalSpecFile(abs);
        nll = (loaded.spec as { nll?: unknown }).nll !== undefined;
      } catch (err) {
        const problems = err instanceof RunSpecError ? err.problems : [errorMessage(err)];
        // the eval spec's problems name its file already
        const named = problems.map((l) => (l.startsWith(`${path.basename(abs)}: `) ? l : `${given.eval}: ${l}`));
        out.push(at(['entries', i, 'eval'], named.join('; '), true));
        continue;
      }
    } else {
      nll = given.eval['nll'] !== undefined;
      // the suite gives the target: an inline eval needs none of its own
      const value = given.eval['targets'] === undefined ? { ...given.eval, targets: ['suite-checkpoint'] } : given.eval;
      const r = EvalSpecSchema.safeParse(value, { reportInput: true });
      // the contributed JSON schema reports the schema's own problems; the rules across fields are said here
      if (!r.success) for (const issue of r.error.issues) if (issue.code === 'custom') out.push(at(['entries', i, 'eval', ...issue.path], formatIssue(issue, EvalSpecSchema)));
    }
    if (!KNOWN_METRIC.test(e.metric)) out.push(at(['entries', i, 'metric'], `"${e.metric}" is not a metric an eval reports: use "pass@k" (k up to the eval's n), "reward" or "nll"`, true));
    else if (e.metric === 'nll' && !nll) out.push(at(['entries', i, given.metric !== undefined ? 'metric' : 'eval'], 'metric "nll" needs an NLL eval ("nll": {"dataset": …})', given.metric !== undefined));
    else if (e.metric !== 'nll' && nll) out.push(at(['entries', i, 'metric'], `an NLL eval reports "nll", not "${e.metric}"`, true));
  }
  return out;
}
