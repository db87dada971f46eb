// A sweep file's problems and hints where they are written (JSON or YAML), for the editor: syntax and
// schema errors at their field; then, the file being valid, every point's run spec validated as a run
// would (checkSweep): a bad point is underlined at the parameter value that makes it (e.g. the -2 of
// `group_size: {values: [4, -2]}`), naming the point; and each swept learning rate far from the
// model's recommended one gets a hint (kinds/hints.ts).
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { diagnosticAt, diagnosticAtPath, issueDiagnostics, type SpecDiagnostic } from '../spec/diagnostics';
import { learningRateHint } from '../kinds/hints';
import { parsePlacedText, specTextFormat, type PlacedText } from '../spec/placedText';
import { RunSpecError } from '../spec/text';
import { checkSweep, expandPoints, type PointProblem } from './expand';
import { SweepFile } from './sweepFile';

/** Every problem and hint of a sweep file's text (`file` names it: its format, and the folder `base` is relative to). */
export async function sweepDiagnostics(text: string, file: string): Promise<SpecDiagnostic[]> {
  const parsed = parsePlacedText(text, specTextFormat(file));
  if (!parsed.ok) return [diagnosticAt(text, parsed.error.offset, parsed.error.length, parsed.error.message)];
  const schemaProblems = issueDiagnostics(SweepFile, text, parsed);
  if (schemaProblems.length) return schemaProblems;
  const s = SweepFile.parse(parsed.value);
  const abs = path.resolve(file);
  let checked: Awaited<ReturnType<typeof checkSweep>>;
  try {
    checked = await checkSweep(abs, s);
  } catch (err) {
    const lines = err instanceof RunSpecError ? err.problems : [String(err)];
    return lines.map((l) => diagnosticAtPath(text, parsed, ['base'], l.startsWith(`${abs}: `) ? l.slice(abs.length + 2) : `base: ${l}`, { rule: true, value: true }));
  }
  // one diagnostic per place and problem, naming every point it makes bad
  const groups = new Map<string, { path: PropertyKey[]; base: boolean; own: boolean; message: string; points: string[] }>();
  for (const p of checked.problems) {
    const at = problemPath(s, p, checked.seedField);
    const key = JSON.stringify([at.path, p.message]);
    const g = groups.get(key) ?? { path: at.path, base: Boolean(at.base), own: Boolean(p.inSweepFile), message: p.message, points: [] };
    g.points.push(p.point.name);
    groups.set(key, g);
  }
  const out: SpecDiagnostic[] = [];
  for (const g of groups.values()) {
    const names = g.points.length > 3 ? `${g.points.slice(0, 3).join(', ')} and ${g.points.length - 3} more` : g.points.join(', ');
    const message = g.own ? g.message : g.base ? `base ${g.message}` : `point${g.points.length > 1 ? 's' : ''} ${names}: ${g.message}`;
    out.push(diagnosticAtPath(text, parsed, g.path, message, { rule: true, value: !g.base }));
  }
  out.push(...learningRateHints(text, parsed, s, checked.baseSpec));
  return out;
}

/** Where a point's problem is written: the parameter value that makes the point, else `seeds`, else `base`. */
function problemPath(s: SweepFile, p: PointProblem, seedField: string): { path: PropertyKey[]; base?: true } {
  if (!p.path) return { path: ['base'], base: true };
  if (p.inSweepFile) return { path: p.path };
  const dotted = p.path.map(String).join('.');
  const key = Object.keys(s.parameters).find((k) => dotted === k || dotted.startsWith(`${k}.`) || k.startsWith(`${dotted}.`));
  if (key === undefined) return dotted === seedField && s.seeds ? { path: ['seeds', s.seeds.indexOf(p.point.seed!)] } : { path: ['base'], base: true };
  return { path: parameterValuePath(s, key, p.point.point[key]) };
}

/** The path of `value` in the sweep file's parameter `key`: its entry in `values`, its `value`, or the parameter. */
function parameterValuePath(s: SweepFile, key: string, value: unknown): PropertyKey[] {
  const param = s.parameters[key]!;
  if ('value' in param) return ['parameters', key, 'value'];
  if ('values' in param) {
    const i = param.values.findIndex((v) => isDeepStrictEqual(v, value));
    if (i >= 0) return ['parameters', key, 'values', i];
  }
  return ['parameters', key];
}

/** A hint at each swept learning rate that is far from the recommended one of its point's model. */
function learningRateHints(text: string, parsed: Extract<PlacedText, { ok: true }>, s: SweepFile, base: unknown): SpecDiagnostic[] {
  if (!s.parameters.learning_rate) return [];
  const baseModel = typeof base === 'object' && base !== null ? (base as { model?: unknown }).model : undefined;
  const out: SpecDiagnostic[] = [];
  for (const p of expandPoints(s)) {
    const lr = p.point.learning_rate;
    const model = p.point.model ?? baseModel;
    if (typeof lr !== 'number' || typeof model !== 'string') continue;
    const m = learningRateHint(model, lr);
    if (!m) continue;
    const d = diagnosticAtPath(text, parsed, parameterValuePath(s, 'learning_rate', lr), m, { severity: 'info', value: true });
    // one hint per value written, however many points share it
    if (!out.some((o) => o.offset === d.offset && o.message === d.message)) out.push(d);
  }
  return out;
}
