// The table of run kinds: each built-in kind of src/core/spec/kinds.ts to its descriptor (loaded on
// first use, so a kind's loop, zod and schemas stay out of the extension's activation), plus the
// kinds registered at run time (registerKind: a test adds one without touching src/). Everything
// that starts, resumes, sweeps, drives or compares a run finds its kind here; an id no kind has is
// an error that names the kinds there are, never a fallback to another kind.
import { addSpecKindRow, allSpecKindRows, isSpecKind, type SpecKind } from '../spec/kinds';
import type { AnyRunKind } from '../training/runKind';

const BUILT_IN: { readonly [K in SpecKind]: () => Promise<AnyRunKind> } = {
  grpo: async () => (await import('../grpo/kind')).GRPO_KIND,
  sft: async () => (await import('../sft/kind')).SFT_KIND,
  dpo: async () => (await import('../dpo/kind')).DPO_KIND,
};

const registered = new Map<string, AnyRunKind>();

/** Adds a kind (its row and descriptor) to the table; returns its removal. */
export function registerKind(kind: AnyRunKind): () => void {
  const removeRow = addSpecKindRow(kind.row);
  registered.set(kind.row.id, kind);
  return () => {
    removeRow();
    registered.delete(kind.row.id);
  };
}

/** The kinds registered at run time, in the order they were added (the built-in ones are not here). */
export function registeredRunKinds(): AnyRunKind[] {
  return [...registered.values()];
}

/** Every kind's id: the built-in ones, then the registered ones. */
export function runKindIds(): string[] {
  return allSpecKindRows().map((k) => k.id);
}

/** Whether `id` names a kind of the table (built-in or registered). */
export function isRunKind(id: string): boolean {
  return runKindIds().includes(id);
}

/** The descriptor of the kind `id`; throws naming the kinds there are when no kind has that id. */
export async function runKind(id: string): Promise<AnyRunKind> {
  if (isSpecKind(id)) return BUILT_IN[id]();
  const k = registered.get(id);
  if (!k) throw new Error(`no kind of run is called "${id}" (the kinds are ${runKindIds().map((x) => `"${x}"`).join(', ')})`);
  return k;
}
