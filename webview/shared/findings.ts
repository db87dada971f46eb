// The run doctor's findings as a short list in a panel's header: title, evidence, remedy.
import type { Finding } from '../../src/protocol/doctor';
import { el } from './dom';

export function renderFindings(container: HTMLElement, findings: readonly Finding[]): void {
  container.hidden = findings.length === 0;
  container.replaceChildren(
    ...findings.map((f) => {
      const item = el('div', 'finding');
      item.dataset.finding = f.id;
      item.append(el('strong', '', f.title), el('span', '', ` — ${f.evidence} `), el('span', 'muted', f.remedy));
      return item;
    }),
  );
}
