// Glob patterns of the `tinker.rewardFiles` setting (`**`, `*`, `?`, `{a,b}`, `[...]`), matched
// against a path relative to a workspace folder with forward slashes.

function globToRegExp(glob: string): RegExp {
  let re = '';
  let inGroup = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        // "**/" matches any number of folders, including none
        const slash = glob[i + 2] === '/';
        re += slash ? '(?:.*/)?' : '.*';
        i += slash ? 2 : 1;
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '{') {
      inGroup++;
      re += '(?:';
    } else if (c === '}' && inGroup > 0) {
      inGroup--;
      re += ')';
    } else if (c === ',' && inGroup > 0) re += '|';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        re += `[${glob.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else re += c.replace(/[.+^$()|\\\]]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** compiled globs: the setting's few patterns are matched on every reward-file lookup */
const compiled = new Map<string, RegExp>();

/** whether `relativePath` (forward slashes) matches `glob` */
export function matchesGlob(relativePath: string, glob: string): boolean {
  let re = compiled.get(glob);
  if (!re) compiled.set(glob, (re = globToRegExp(glob.replace(/^\.\//, ''))));
  return re.test(relativePath);
}
