// The Tinker API key: kept in VS Code's SecretStorage, with the TINKER_API_KEY environment variable
// as a fallback. Never in settings, logs, run directories or error text (the Redactor learns it).
import * as vscode from 'vscode';
import { Redactor } from '../../core/config/redact';
import { Disposable } from '../common/lifecycle';

const SECRET_KEY = 'tinker.apiKey';

export type ApiKeySource = 'secret-storage' | 'environment';

/** The SDK accepts API keys (tml-…) and JWTs (eyJ…) as credentials. */
export function validateApiKey(value: string): string | undefined {
  const v = value.trim();
  if (!v) return 'Enter a key.';
  if (/\s/.test(v)) return 'A Tinker API key has no spaces.';
  if (!v.startsWith('tml-') && !v.startsWith('eyJ')) return 'Tinker API keys start with "tml-" (or "eyJ" for a JWT).';
  return undefined;
}

/** W&B API keys are one word (40 hex characters on wandb.ai; self-hosted servers differ, so only the shape is checked). */
export function validateWandbKey(value: string): string | undefined {
  const v = value.trim();
  return !v || /\s/.test(v) ? 'A W&B API key is one word with no spaces.' : undefined;
}

/** The W&B API key: SecretStorage, else WANDB_API_KEY; never in settings, logs or run directories. */
export class WandbKeyStore {
  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly redactor: Redactor,
    private readonly env: Record<string, string | undefined> = process.env,
  ) {
    this.redactor.add(env.WANDB_API_KEY);
  }

  async get(): Promise<string | undefined> {
    const stored = await this.secrets.get(WANDB_SECRET_KEY);
    if (stored) {
      this.redactor.add(stored);
      return stored;
    }
    return this.env.WANDB_API_KEY?.trim() || undefined;
  }

  async set(key: string): Promise<void> {
    const problem = validateWandbKey(key);
    if (problem) throw new Error(problem);
    const v = key.trim();
    this.redactor.add(v);
    await this.secrets.store(WANDB_SECRET_KEY, v);
  }

  async clear(): Promise<void> {
    await this.secrets.delete(WANDB_SECRET_KEY);
  }
}

const WANDB_SECRET_KEY = 'tinker.wandbApiKey';

export class ApiKeyStore extends Disposable {
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly redactor: Redactor,
    private readonly env: Record<string, string | undefined> = process.env,
  ) {
    super();
    this.redactor.add(env.TINKER_API_KEY);
    this._register(
      secrets.onDidChange((e) => {
        if (e.key === SECRET_KEY) this.changed.fire();
      }),
    );
  }

  async get(): Promise<{ key: string; source: ApiKeySource } | undefined> {
    const stored = await this.secrets.get(SECRET_KEY);
    if (stored) {
      this.redactor.add(stored);
      return { key: stored, source: 'secret-storage' };
    }
    const fromEnv = this.env.TINKER_API_KEY?.trim();
    return fromEnv ? { key: fromEnv, source: 'environment' } : undefined;
  }

  async set(key: string): Promise<void> {
    const problem = validateApiKey(key);
    if (problem) throw new Error(problem);
    this.redactor.add(key.trim());
    await this.secrets.store(SECRET_KEY, key.trim());
  }

  async clear(): Promise<void> {
    await this.secrets.delete(SECRET_KEY);
  }
}

const HF_SECRET_KEY = 'tinker.huggingFaceToken';

/** The Hugging Face token (publishing to the Hub): SecretStorage, else HF_TOKEN; never the Tinker key. */
export class HubTokenStore {
  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly redactor: Redactor,
    private readonly env: Record<string, string | undefined> = process.env,
  ) {
    this.redactor.add(env.HF_TOKEN?.trim());
  }

  async get(): Promise<string | undefined> {
    const stored = await this.secrets.get(HF_SECRET_KEY);
    if (stored) this.redactor.add(stored);
    return stored?.trim() || this.env.HF_TOKEN?.trim() || undefined;
  }

  async set(token: string): Promise<void> {
    const v = token.trim();
    if (!v || /\s/.test(v)) throw new Error('A Hugging Face token is one word with no spaces (hf_…).');
    if (v.startsWith('tml-')) throw new Error('That is a Tinker API key, not a Hugging Face token: create one with write access at huggingface.co/settings/tokens.');
    this.redactor.add(v);
    await this.secrets.store(HF_SECRET_KEY, v);
  }

  /** Forgets the stored token (HF_TOKEN in the environment, if set, is still used). */
  async clear(): Promise<void> {
    await this.secrets.delete(HF_SECRET_KEY);
  }

  /** Whether HF_TOKEN is set in the environment (it stands in when nothing is stored). */
  get fromEnvironment(): boolean {
    return Boolean(this.env.HF_TOKEN?.trim());
  }
}
