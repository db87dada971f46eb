// Overrides on top of a spec file's JSON (an agent's `overrides`, and later a sweep's point): the one
// rule every kind follows — nested objects (dataset, reward, …) merge field by field, anything else
// (numbers, strings, lists) replaces what the file says. The result is validated as the file would be.

export function mergeSpec(base: unknown, overrides: Record<string, unknown>): unknown {
  if (!isRecord(base)) return base;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(overrides)) {
    const b = out[k];
    out[k] = isRecord(v) && isRecord(b) ? mergeSpec(b, v) : v;
  }
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
