// Which Tinker-protocol server the extension talks to, resolved from settings and the environment.
// Pure: the VS Code adapter reads the raw settings and hands them here.
import * as z from 'zod';

import { BACKEND_KINDS, DEFAULT_CLOUD_BASE_URL, ResolvedBackend } from './backendKinds';
import { checkTransport } from './keyOrigin';

export { DEFAULT_CLOUD_BASE_URL };
export type { ResolvedBackend };

export const BackendKind = z.enum(BACKEND_KINDS);

const HttpUrl = z
  .string()
  .trim()
  .refine((s) => /^https?:\/\/[^\s/]+/.test(s), { message: 'must be an http:// or https:// URL' });

/** Raw settings as VS Code returns them (any shape: users edit settings.json by hand). */
export const BackendSettings = z.object({
  backend: BackendKind.default('local'),
  cloudBaseUrl: z.string().default(DEFAULT_CLOUD_BASE_URL),
  customBaseUrl: z.string().default(''),
});
export type BackendSettings = z.infer<typeof BackendSettings>;

export class BackendConfigError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(message);
    this.name = 'BackendConfigError';
  }
}

/**
 * Resolves the backend. `env` is consulted like the Python SDK does: TINKER_BASE_URL overrides the
 * cloud base URL when set and non-empty.
 */
export function resolveBackend(raw: unknown, env: Record<string, string | undefined> = {}): ResolvedBackend {
  const parsed = BackendSettings.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = `tinker.${issue?.path.join('.') ?? 'backend'}`;
    throw new BackendConfigError(key, `Setting ${key}: ${issue?.message ?? 'invalid value'}`);
  }
  const s = parsed.data;
  switch (s.backend) {
    case 'local':
      return { kind: 'local' };
    case 'cloud': {
      const url = env.TINKER_BASE_URL?.trim() || s.cloudBaseUrl.trim() || DEFAULT_CLOUD_BASE_URL;
      const ok = HttpUrl.safeParse(url);
      if (!ok.success) throw new BackendConfigError('tinker.cloudBaseUrl', `Setting tinker.cloudBaseUrl: "${url}" ${ok.error.issues[0]?.message}`);
      const insecure = checkTransport(ok.data);
      if (insecure) throw new BackendConfigError('tinker.cloudBaseUrl', `Setting tinker.cloudBaseUrl: ${insecure}.`);
      return { kind: 'cloud', baseUrl: stripTrailingSlash(ok.data), needsApiKey: true };
    }
    case 'custom': {
      if (!s.customBaseUrl.trim()) {
        throw new BackendConfigError(
          'tinker.customBaseUrl',
          'The backend is "custom" but tinker.customBaseUrl is empty: set it to your server, e.g. http://127.0.0.1:8000.',
        );
      }
      const ok = HttpUrl.safeParse(s.customBaseUrl);
      if (!ok.success) throw new BackendConfigError('tinker.customBaseUrl', `Setting tinker.customBaseUrl: "${s.customBaseUrl}" ${ok.error.issues[0]?.message}`);
      const insecure = checkTransport(ok.data);
      if (insecure) throw new BackendConfigError('tinker.customBaseUrl', `Setting tinker.customBaseUrl: ${insecure}.`);
      return { kind: 'custom', baseUrl: stripTrailingSlash(ok.data), needsApiKey: false };
    }
  }
}

function stripTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
