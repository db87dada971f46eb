// The environment reward workers run with: the caller's, minus anything that looks like a secret
// (reward code is user code and must not see the Tinker API key or other credentials).
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL/i;

export function workerEnvironment(extra: Record<string, string> = {}, source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && !SECRET_NAME.test(name)) env[name] = value;
  }
  return { ...env, ...extra };
}
