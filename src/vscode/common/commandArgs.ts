// A command's arguments come from menus, CodeLenses, tests, keybindings and other extensions: each one
// a handler uses is parsed with zod, and one it cannot use fails with the command and argument named.
// No vscode import here, so the wording is unit-tested in plain Node.

/** A command called with an argument it cannot use (by a test, a keybinding or another extension). */
export class CommandArgumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandArgumentError';
  }
}

/**
 * Argument `name` of `command`, parsed by the zod schema `build` makes (zod loads on first use, not at
 * activation). A value the schema refuses throws a CommandArgumentError naming the command, the
 * argument and what is wrong with it.
 */
export async function commandArg<T>(command: string, name: string, value: unknown, build: (zod: typeof import('zod')) => import('zod').ZodType<T>): Promise<T> {
  const schema = build(await import('zod'));
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const why = r.error.issues.map((i) => `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`).join('; ');
  throw new CommandArgumentError(`${command} was called with an unusable ${name} argument: ${why}`);
}
