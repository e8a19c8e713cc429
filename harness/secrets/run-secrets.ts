/**
 * A run's secrets: the `secrets` map and every auth binding's values by name, resolved once (sources.ts), and what
 * turns typed text with `{{secret:NAME}}` placeholders into the text to type.
 */
import { resolveAuthBindings, type AuthBinding } from './auth-bindings.ts';
import { splitSecretPlaceholders, unknownSecret, type TextPart } from './placeholders.ts';
import { resolveSecretsMap, secretLookup, type SecretRef } from './sources.ts';

/** The resolved secrets of a run. */
export interface RunSecrets {
  /** The auth bindings, in order (the first that matches a URL applies). */
  readonly bindings: readonly AuthBinding[];
  /** The secret names known (typeable as {{secret:NAME}}). */
  readonly names: readonly string[];
  /** The value of secret `name` (SECRET_ERR_UNKNOWN naming the known ones). */
  value(name: string): string;
  /** `text` cut into plain runs and secret values to type (SECRET_ERR_UNKNOWN for an unknown name). */
  expand(text: string): Array<{ text: string; secret: string | null }>;
}

/** Resolve `secrets`, `auth` and `secretsFile` (see sources.ts and auth-bindings.ts for the codes). */
export function resolveRunSecrets(o: {
  auth?: unknown;
  secrets?: Record<string, SecretRef> | undefined;
  secretsFile?: string | undefined;
  env?: Record<string, string | undefined>;
  allowLiterals: boolean;
  where: string;
}): RunSecrets {
  const none = o.auth === undefined && o.secrets === undefined;
  const lookup = none ? () => undefined : secretLookup({ secretsFile: o.secretsFile, ...(o.env ? { env: o.env } : {}) });
  const map = resolveSecretsMap(o.secrets, lookup, { allowLiterals: o.allowLiterals, where: o.where });
  const bindings = resolveAuthBindings(o.auth, lookup);
  const values = new Map<string, string>();
  for (const b of bindings) for (const [k, v] of b.secretValues) values.set(k, v);
  for (const [k, v] of map) values.set(k, v);
  const names = [...values.keys()];
  const value = (name: string): string => {
    const v = values.get(name);
    if (v === undefined) throw unknownSecret(name, names);
    return v;
  };
  return {
    bindings,
    names,
    value,
    expand: (text) => splitSecretPlaceholders(text).map((p: TextPart) => (p.kind === 'text' ? { text: p.text, secret: null } : { text: value(p.name), secret: p.name })),
  };
}

/**
 * Check a task file's `auth` and `secrets` without looking any variable up: structure (AUTH_ERR_BAD_BINDING,
 * SECRET_ERR_BAD_NAME) and no value given inline (SECRET_ERR_INLINE). Variables are looked up when the run starts.
 */
export function checkTaskSecrets(o: { auth?: unknown; secrets?: Record<string, unknown> | undefined; where: string }): void {
  // Every named variable resolves to a stand-in too short to be registered (registry.ts MIN_SECRET_LENGTH), so only
  // the file's own content is judged.
  const env = new Proxy({} as Record<string, string>, { get: () => 'xyz' });
  resolveRunSecrets({ auth: o.auth, secrets: o.secrets as Record<string, SecretRef> | undefined, env, allowLiterals: false, where: o.where });
}
