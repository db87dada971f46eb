// The backend kinds and the resolved-backend type, without any parsing code, so that the extension can
// name backends at activation without loading zod (parsing lives in ./backend, loaded lazily).

export const BACKEND_KINDS = ['local', 'cloud', 'custom'] as const;
export type BackendKind = (typeof BACKEND_KINDS)[number];

export const DEFAULT_CLOUD_BASE_URL = 'https://tinker.thinkingmachines.dev/services/tinker-prod';

export type ResolvedBackend =
  | { kind: 'local' }
  | { kind: 'cloud'; baseUrl: string; needsApiKey: true }
  | { kind: 'custom'; baseUrl: string; needsApiKey: false };

export function isBackendKind(v: unknown): v is BackendKind {
  return typeof v === 'string' && (BACKEND_KINDS as readonly string[]).includes(v);
}

export function describeBackend(b: ResolvedBackend): string {
  switch (b.kind) {
    case 'local':
      return 'local engine';
    case 'cloud':
      return 'Tinker cloud';
    case 'custom':
      return `custom server ${b.baseUrl}`;
  }
}
