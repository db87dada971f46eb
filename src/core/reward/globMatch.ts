// Glob patterns of the `tinker.rewardFiles` setting, matched with picomatch the way VS Code matches
// its own globs (`**`, `*`, `?`, `{a,b}`, `[...]`; dot files included; no leading-`!` negation)
// against a path relative to a workspace folder with forward slashes.
import picomatch from 'picomatch';
import { errorMessage } from '../errors';

const OPTIONS: picomatch.PicomatchOptions = { dot: true, nonegate: true, debug: true };

/** compiled globs: the setting's few patterns are matched on every reward-file lookup */
const compiled = new Map<string, ((path: string) => boolean) | { problem: string }>();

function compile(glob: string): ((path: string) => boolean) | { problem: string } {
  let entry = compiled.get(glob);
  if (!entry) {
    try {
      // debug: picomatch throws on a pattern it cannot turn into a regular expression instead of
      // silently matching nothing
      // [!…] negates a class in VS Code's globs; picomatch wants [^…]
      entry = picomatch(glob.replace(/^\.\//, '').replace(/(^|[^\\])\[!/g, '$1[^'), OPTIONS);
    } catch (err) {
      const reason = errorMessage(err).replace(/^Invalid regular expression: \/.*\/: /, '');
      entry = { problem: `"${glob}" is not a valid glob pattern (${reason}); it matches no file` };
    }
    compiled.set(glob, entry);
  }
  return entry;
}

/** why `glob` cannot be used, or undefined when it is a valid pattern */
export function globProblem(glob: string): string | undefined {
  const entry = compile(glob);
  return typeof entry === 'function' ? undefined : entry.problem;
}

/** whether `relativePath` (forward slashes) matches `glob`; an invalid glob matches nothing */
export function matchesGlob(relativePath: string, glob: string): boolean {
  const entry = compile(glob);
  return typeof entry === 'function' && entry(relativePath);
}
