// Small DOM helpers shared by the panels: typed lookups that fail loudly, and element building
// with text only (never HTML from data).

export function byId(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing`);
  return el;
}

/** The element #id, checked to be a `type` (HTMLSelectElement, HTMLButtonElement, …). */
export function typedById<T extends HTMLElement>(id: string, type: abstract new () => T): T {
  const el = byId(id);
  if (!(el instanceof type)) throw new Error(`#${id} is not a ${type.name}`);
  return el;
}

export function inputById(id: string): HTMLInputElement {
  return typedById(id, HTMLInputElement);
}

/** An element with a class and text content. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Replaces `parent`'s children with `nodes`, however many (replaceChildren(...nodes) overflows the stack past ~100k). */
export function replaceChildrenWith(parent: Element, nodes: readonly Node[]): void {
  const f = document.createDocumentFragment();
  for (const n of nodes) f.appendChild(n);
  parent.replaceChildren(f);
}

/** Calls `redraw` when VS Code switches theme (the body's class changes). */
export function onThemeChange(redraw: () => void): void {
  new MutationObserver(redraw).observe(document.body, { attributes: true, attributeFilter: ['class'] });
}

/** Runs `fn` once on the next animation frame however often it is scheduled before then. */
export function frameScheduler(fn: () => void): () => void {
  let frame = 0;
  return () => {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      fn();
    });
  };
}
