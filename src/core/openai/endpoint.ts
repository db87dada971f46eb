// Where a backend serves its OpenAI-compatible API (no imports: the extension reads this at activation).

/** Where OpenAI-compatible requests go. */
export interface OpenAiEndpoint {
  /** e.g. http://127.0.0.1:8765/v1 or https://…/services/tinker-prod/oai/api/v1 (no trailing slash) */
  baseUrl: string;
  /** sent as `Authorization: Bearer`; never shown */
  apiKey?: string;
}

/** The path the service serves its OpenAI-compatible API under (appended to its base URL). */
export const SERVICE_OAI_PATH = '/oai/api/v1';
/** The path the embedded engine serves it under (it serves SERVICE_OAI_PATH too). */
export const ENGINE_OAI_PATH = '/v1';

/** The OpenAI-compatible base URL of a backend: the engine's URL + /v1, a service's base URL + /oai/api/v1. */
export function openAiBaseUrl(backend: 'local' | 'cloud' | 'custom', baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '') + (backend === 'local' ? ENGINE_OAI_PATH : SERVICE_OAI_PATH);
}
