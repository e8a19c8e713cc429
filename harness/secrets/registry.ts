/**
 * The process-wide list of secret values and the redactor every file writer and message goes through.
 *
 * A value becomes secret when an auth binding, a `secrets` map or a model adapter's API key (read from the
 * environment) resolves it (registerSecret). redactSecrets(text) replaces, longest first, each secret's plaintext and
 * its simple encodings (JSON-escaped, URL-encoded, base64 of the value alone, base64 of `user:value` pairs registered
 * with registerSecretForm) with its placeholder `{{secret:NAME}}`: the very text an agent writes to have the harness
 * type it, so a redacted trace replays (reenact) with the secret typed again.
 * Values shorter than MIN_SECRET_LENGTH characters are still typed but not redacted (replacing "ab" in every file
 * would mangle them): resolving one warns through its binding's error text (see store.ts).
 */

/** Shortest value redacted in text (shorter ones would match ordinary words and numbers). */
export const MIN_SECRET_LENGTH = 4;

const forms = new Map<string, string>();
let ordered: Array<[string, string]> | null = null;

/** The placeholder an agent writes for secret `name`. */
export function secretPlaceholder(name: string): string {
  return `{{secret:${name}}}`;
}

/** Every simple encoding of `value` a file or a request body might carry. */
export function encodingsOf(value: string): string[] {
  const out = new Set<string>([value]);
  out.add(JSON.stringify(value).slice(1, -1));
  out.add(encodeURIComponent(value));
  out.add(encodeURIComponent(value).replace(/%20/g, '+'));
  const b64 = Buffer.from(value, 'utf8').toString('base64');
  out.add(b64);
  out.add(b64.replace(/=+$/, ''));
  out.add(Buffer.from(value, 'utf8').toString('base64url'));
  return [...out].filter((s) => s.length >= MIN_SECRET_LENGTH);
}

/** Mark `value` secret under `name` (idempotent): from now on redactSecrets replaces it and its encodings. */
export function registerSecret(name: string, value: string): void {
  if (value.length < MIN_SECRET_LENGTH) return;
  for (const f of encodingsOf(value)) registerSecretForm(name, f);
}

/** Mark one exact string secret under `name` (e.g. base64 of `user:password` in a Basic header). */
export function registerSecretForm(name: string, form: string): void {
  if (form.length < MIN_SECRET_LENGTH || forms.get(form) === name) return;
  forms.set(form, name);
  ordered = null;
}

/** How many secret strings are registered (tests). */
export function secretFormCount(): number {
  return forms.size;
}

/** `text` with every registered secret (and its encodings) replaced by `{{secret:NAME}}`. */
export function redactSecrets(text: string): string {
  if (forms.size === 0 || text.length < MIN_SECRET_LENGTH) return text;
  ordered ??= [...forms].sort((a, b) => b[0].length - a[0].length);
  let out = text;
  for (const [form, name] of ordered) if (out.includes(form)) out = out.split(form).join(secretPlaceholder(name));
  return out;
}

/** True when `text` holds a registered secret (or an encoding of one). */
export function holdsSecret(text: string): boolean {
  for (const form of forms.keys()) if (text.includes(form)) return true;
  return false;
}

/** `value` (any JSON-able data) with every string redacted (keys too). */
export function redactDeep<T>(value: T): T {
  if (forms.size === 0) return value;
  return walk(value) as T;
}

function walk(v: unknown): unknown {
  if (typeof v === 'string') return redactSecrets(v);
  if (Array.isArray(v)) return v.map(walk);
  if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[redactSecrets(k)] = walk(x);
    return out;
  }
  return v;
}
