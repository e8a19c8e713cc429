/** The text of `error.txt`: what failed a run, for a human reading the output directory. */
import { isVncuaError } from '../errors.ts';

const MAX_CAUSES = 8;

/**
 * Formats a run failure: the message on the first line, then `code: ...` for a VncuaError,
 * then the stack; each `cause` follows after a `Caused by:` line (up to 8 deep).
 */
export function formatRunError(err: unknown): string {
  const parts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; depth <= MAX_CAUSES && current !== undefined; depth++) {
    if (depth > 0) parts.push('', 'Caused by:');
    parts.push(...describe(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return `${parts.join('\n')}\n`;
}

function describe(err: unknown): string[] {
  if (!(err instanceof Error)) return [typeof err === 'string' ? err : safeJson(err)];
  const lines = [err.message || err.name];
  if (isVncuaError(err)) lines.push(`code: ${err.code}`);
  if (isVncuaError(err) && err.details !== undefined) lines.push(`details: ${safeJson(err.details)}`);
  lines.push('', err.stack ?? `${err.name}: ${err.message}`);
  return lines;
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
