// A list of fixed-height rows that renders only what is in view (plus a margin), so an iteration of
// 1,024 groups × 16 samples scrolls smoothly and a filter change re-renders a screenful, not the list.

export class VirtualList {
  private readonly spacer: HTMLElement;
  private count = 0;
  private frame = 0;

  constructor(
    readonly el: HTMLElement,
    private readonly rowHeight: number,
    private readonly renderRow: (index: number) => HTMLElement,
  ) {
    this.spacer = document.createElement('div');
    this.spacer.className = 'vlist-spacer';
    this.el.append(this.spacer);
    this.el.addEventListener('scroll', () => this.schedule());
    new ResizeObserver(() => this.schedule()).observe(this.el);
  }

  /** Replaces the rows (their number); rendering follows on the next frame. */
  setCount(count: number): void {
    this.count = count;
    this.spacer.style.height = `${count * this.rowHeight}px`;
    this.renderNow();
  }

  /** Re-renders the rows in view (after their content changed). */
  refresh(): void {
    this.renderNow();
  }

  scrollIntoView(index: number): void {
    const top = index * this.rowHeight;
    if (top < this.el.scrollTop) this.el.scrollTop = top;
    else if (top + this.rowHeight > this.el.scrollTop + this.el.clientHeight) this.el.scrollTop = top + this.rowHeight - this.el.clientHeight;
    this.renderNow();
  }

  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.renderNow();
    });
  }

  private renderNow(): void {
    const height = this.el.clientHeight || 600;
    const first = Math.max(0, Math.floor(this.el.scrollTop / this.rowHeight) - 10);
    const last = Math.min(this.count, Math.ceil((this.el.scrollTop + height) / this.rowHeight) + 10);
    const rows: HTMLElement[] = [];
    for (let i = first; i < last; i++) {
      const row = this.renderRow(i);
      row.style.top = `${i * this.rowHeight}px`;
      row.style.height = `${this.rowHeight}px`;
      rows.push(row);
    }
    this.spacer.replaceChildren(...rows);
  }
}
