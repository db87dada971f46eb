// Preference collection in the playground: with samples on both sides, one sample of each side is
// selected (the first by default; ↑/↓ move the selection of the focused side, ←/→ switch sides) and
// marked "A better" / "B better" (buttons, or the keys A and B) or skipped (S); each choice is appended
// by the host to the workspace's preferences file (a DPO pairs file), and the selection moves on to
// the next samples. Self-contained: the playground's main module creates the bar and tells it each run.
import { el } from '../shared/dom';
import type { FromWebview, RunView, SideId } from '../../src/protocol/playgroundProtocol';

type Post = (m: FromWebview) => void;

export class PreferenceBar {
  readonly el: HTMLElement;
  private readonly label: HTMLElement;
  private readonly status: HTMLElement;
  private readonly buttons: HTMLButtonElement[] = [];
  private run: RunView | undefined;
  private runId: string | undefined;
  private pick: Record<SideId, number> = { A: 0, B: 0 };
  private side: SideId = 'A';
  private recorded = 0;

  constructor(private readonly post: Post) {
    this.el = el('section', 'preference-bar');
    this.el.setAttribute('aria-label', 'Preference');
    this.el.hidden = true;
    this.label = el('span', 'preference-label');
    this.status = el('span', 'muted preference-status');
    this.status.setAttribute('role', 'status');
    const button = (text: string, title: string, onClick: () => void, cls = 'secondary') => {
      const b = el('button', cls, text);
      b.type = 'button';
      b.title = title;
      b.addEventListener('click', onClick);
      this.buttons.push(b);
      return b;
    };
    const open = el('button', 'link', 'Show pairs');
    open.type = 'button';
    open.addEventListener('click', () => this.post({ type: 'openPreferences' }));
    this.el.append(
      el('strong', '', 'Which is better? '),
      this.label,
      button('A better', 'Record the selected A sample as preferred (key A)', () => this.choose('A')),
      button('B better', 'Record the selected B sample as preferred (key B)', () => this.choose('B')),
      button('Skip', 'Move to the next samples without recording (key S)', () => this.advance()),
      this.status,
      open,
    );
    document.addEventListener('keydown', (e) => this.onKey(e));
  }

  /** The run shown changed (or grew): show the bar when both sides have samples, keep the selection in range. */
  update(run: RunView | undefined): void {
    this.run = run;
    if (run?.id !== this.runId) {
      this.runId = run?.id;
      this.pick = { A: 0, B: 0 };
      this.side = 'A';
    }
    const ready = this.count('A') > 0 && this.count('B') > 0;
    this.el.hidden = !ready;
    if (!ready) return;
    for (const s of ['A', 'B'] as const) this.pick[s] = Math.min(this.pick[s], this.count(s) - 1);
    this.show();
  }

  /** The host appended the pair. */
  saved(m: { file: string; line: number; pairs: number }): void {
    this.recorded++;
    this.status.textContent = `Saved as line ${m.line} of ${m.file.replace(/^.*[\\/]/, '')} (${m.pairs} ${m.pairs === 1 ? 'pair' : 'pairs'} in the file).`;
  }

  private count(side: SideId): number {
    return this.run?.sides[side]?.samples.length ?? 0;
  }

  private indexOf(side: SideId): number | undefined {
    return this.run?.sides[side]?.samples[this.pick[side]]?.index;
  }

  private show(): void {
    const a = this.indexOf('A');
    const b = this.indexOf('B');
    this.label.textContent = `A #${a ?? '–'} vs B #${b ?? '–'} `;
    for (const card of document.querySelectorAll<HTMLElement>('article.sample')) {
      const selected = (card.dataset.side === 'A' && Number(card.dataset.index) === a) || (card.dataset.side === 'B' && Number(card.dataset.index) === b);
      card.classList.toggle('preference-pick', selected);
      card.classList.toggle('preference-side', selected && card.dataset.side === this.side);
      if (selected) card.setAttribute('aria-current', 'true');
      else card.removeAttribute('aria-current');
    }
  }

  private choose(better: SideId): void {
    const A = this.indexOf('A');
    const B = this.indexOf('B');
    if (A === undefined || B === undefined) return;
    this.status.textContent = 'Saving…';
    this.post({ type: 'preference', better, A, B });
    this.advance();
  }

  /** The next samples of both sides (staying on the last when a side has no more). */
  private advance(): void {
    for (const s of ['A', 'B'] as const) this.pick[s] = Math.min(this.pick[s] + 1, Math.max(this.count(s) - 1, 0));
    this.show();
  }

  private onKey(e: KeyboardEvent): void {
    if (this.el.hidden || e.altKey || e.ctrlKey || e.metaKey) return;
    const t = e.target as HTMLElement | null;
    // typing in the form is not a choice
    if (t && (t.closest('input, textarea, select, [contenteditable="true"]') || (t.tagName === 'BUTTON' && (e.key === 'Enter' || e.key === ' ')))) return;
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    let handled = true;
    if (key === 'a') this.choose('A');
    else if (key === 'b') this.choose('B');
    else if (key === 's') this.advance();
    else if (key === 'ArrowLeft') this.side = 'A';
    else if (key === 'ArrowRight') this.side = 'B';
    else if (key === 'ArrowDown') this.pick[this.side] = Math.min(this.pick[this.side] + 1, this.count(this.side) - 1);
    else if (key === 'ArrowUp') this.pick[this.side] = Math.max(this.pick[this.side] - 1, 0);
    else handled = false;
    if (!handled) return;
    e.preventDefault();
    this.show();
    const a = this.indexOf(this.side);
    document.querySelector<HTMLElement>(`article.sample[data-side="${this.side}"][data-index="${a}"]`)?.scrollIntoView({ block: 'nearest' });
  }
}
