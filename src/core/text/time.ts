// Times as the views show them: local time to the minute, the same on every machine's locale.

/** "2026-11-23 10:45" in local time; an unparsable ISO string is shown as it is. */
export function formatLocalTime(t: Date | string): string {
  const d = typeof t === 'string' ? new Date(t) : t;
  if (Number.isNaN(d.getTime())) return String(t);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}
