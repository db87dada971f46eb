// Keeps secrets out of anything a person or a file will see (logs, error text, run directories).
// Every string that leaves the extension through the log passes through a Redactor that knows the
// secrets currently in use, plus the shapes of Tinker credentials.

const CREDENTIAL_SHAPES: RegExp[] = [
  /\btml-[A-Za-z0-9_-]{6,}/g, // Tinker API keys
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, // JWTs
];

export class Redactor {
  private readonly secrets = new Set<string>();

  /** Registers a secret value; ignored when too short to be one (avoids redacting common words). */
  add(secret: string | undefined): void {
    if (secret && secret.length >= 8) this.secrets.add(secret);
  }

  remove(secret: string | undefined): void {
    if (secret) this.secrets.delete(secret);
  }

  redact(text: string): string {
    let out = text;
    for (const s of this.secrets) out = out.split(s).join('«redacted»');
    for (const re of CREDENTIAL_SHAPES) out = out.replace(re, '«redacted»');
    return out;
  }
}
