/**
 * The process's stdout and stderr through the redactor (registry.ts): installed by the `vncua` command, so a secret in
 * a log line, a progress line or an error printed by any module (or an agent module's console.log) is printed as its
 * placeholder. Idempotent.
 */
import { holdsSecret, redactSecrets, secretFormCount } from './registry.ts';

let installed = false;

/** Redact every string or Buffer written to process.stdout and process.stderr from now on. */
export function installStdioRedaction(): void {
  if (installed) return;
  installed = true;
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (...a: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (secretFormCount() === 0) return write(chunk, ...rest);
      if (typeof chunk === 'string') return write(redactSecrets(chunk), ...rest);
      // Bytes (possibly binary output) are only rewritten when they hold a secret.
      if (chunk instanceof Uint8Array) {
        const text = Buffer.from(chunk).toString('utf8');
        if (holdsSecret(text)) return write(redactSecrets(text), ...rest);
      }
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
}
