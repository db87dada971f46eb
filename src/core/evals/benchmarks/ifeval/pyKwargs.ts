// An instruction's kwargs read the way the cookbook's Python reads them. The hub's rows give every
// instruction the whole struct of IFEval's kwargs, absent ones as null, and Python's dict.get returns
// that null rather than the default; a null, a string where a number belongs, or a float used as an
// index raises in Python, and the cookbook counts the instruction as not met. PyTypeError stands for
// those raises: the verifier turns it into `false` as the cookbook does.
import { NestedTooDeep, pyJsonLoads } from './pyJson';

/** What Python would raise (TypeError, AttributeError, IndexError) on these values. */
export class PyTypeError extends Error {}

const isDict = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `kwargs.get(key, default)`: the value when the key is there, null included */
export function kwGet(kwargs: unknown, key: string, fallback: unknown): unknown {
  if (!isDict(kwargs)) throw new PyTypeError(`kwargs is not a dict: .get("${key}")`);
  return Object.hasOwn(kwargs, key) ? kwargs[key] : fallback;
}

/** a value a str method is called on, or a str argument */
export function pyStr(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new PyTypeError(`${what} is not a str`);
  return v;
}

/** a value compared with an int (Python's bool is an int) */
export function pyNumber(v: unknown, what: string): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v !== 'number') throw new PyTypeError(`${what} is not a number`);
  return v;
}

/** `list[i]`: an int (or bool) index, negative from the end */
export function pyIndex<T>(list: readonly T[], i: unknown, what: string): T {
  const n = pyNumber(i, what);
  if (!Number.isInteger(n)) throw new PyTypeError(`${what} is not an int`);
  const at = n < 0 ? list.length + n : n;
  if (at < 0 || at >= list.length) throw new PyTypeError(`${what}: list index out of range`);
  return list[at]!;
}

/** `for x in v`: a list's items, a str's characters, a dict's keys */
export function pyIter(v: unknown, what: string): unknown[] {
  if (Array.isArray(v)) return v;
  if (typeof v === 'string') return Array.from(v);
  if (isDict(v)) return Object.keys(v);
  throw new PyTypeError(`${what} is not iterable`);
}

/**
 * The cookbook's relation check: all three comparisons are made first (so a target that is not a
 * number raises), then an unknown relation passes.
 */
export function relationHolds(count: number, relation: unknown, target: unknown): boolean {
  const t = pyNumber(target, 'the target count');
  const checks: Record<string, boolean> = { 'at least': count >= t, 'at most': count <= t, exactly: count === t };
  if (Array.isArray(relation) || isDict(relation)) throw new PyTypeError('the relation is unhashable');
  return typeof relation === 'string' && Object.hasOwn(checks, relation) ? checks[relation]! : true;
}

/**
 * The cookbook's kwargs list from a row's: null → {}, a JSON string → what it decodes to ({} when it
 * does not), a dict as it is, anything else → {}; padded with {} to one per instruction.
 */
export function instructionKwargs(raw: readonly unknown[], instructionCount: number): unknown[] {
  const out = raw.map((kw, i): unknown => {
    if (typeof kw === 'string') {
      try {
        const decoded = pyJsonLoads(kw);
        return decoded ? decoded.value : {};
      } catch (e) {
        if (e instanceof NestedTooDeep) throw new Error(`kwargs[${i}]: its JSON is nested too deeply to read`);
        throw e;
      }
    }
    return isDict(kw) ? kw : {};
  });
  while (out.length < instructionCount) out.push({});
  return out;
}
