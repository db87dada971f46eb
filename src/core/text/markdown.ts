// Untrusted text (model completions, server strings, file names) placed into Markdown that VS Code
// renders (hovers, tree tooltips): it must show as text, never as a link, an image, HTML or a command.
// Pure: the adapters in src/vscode use it.

/** Every character CommonMark/GFM gives a meaning, escaped; line breaks folded to spaces. */
export function escapeMarkdown(s: string): string {
  return s.replace(/\s+/g, ' ').replace(/[\\`*_{}[\]()#+\-.!|<>~&:@=]/g, (c) => `\\${c}`);
}

/**
 * Text as a code span (so URLs are not linkified and nothing renders): backticks become a look-alike
 * (a span cannot hold its own delimiter safely), `|` is escaped for table cells, line breaks folded,
 * cut at `max` characters.
 */
export function codeSpan(s: string, max = Infinity): string {
  const one = s.replace(/\s+/g, ' ');
  const cut = one.length > max ? `${one.slice(0, Math.max(0, max - 1))}…` : one;
  return `\`${cut.replace(/`/g, 'ˋ').replace(/\|/g, '\\|')}\``;
}
