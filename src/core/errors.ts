// A caught value in words: what every error message, log line and tool result built from a `catch`
// shows. An Error gives its message; anything else thrown (a string, a number) is shown as it is.

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
