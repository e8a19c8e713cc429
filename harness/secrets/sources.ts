/**
 * Where secret values come from: environment variables NAMED in the options, a task or a config, looked up first in
 * a secrets file and then in the process environment. Never a value in a task file itself.
 *
 * Secrets file (`secretsFile`): by extension,
 *   .json  an object of names to string values: { "EXAMPLE_TOKEN": "…", "LOGIN_PASSWORD": "…" }
 *   other  dotenv lines: NAME=value, `export NAME=value`, values optionally in '…' or "…" quotes, # comments.
 * A name found in the file wins over the environment. Every value looked up is registered secret (registry.ts).
 */
import { readFileSync } from 'node:fs';
import { VncuaError } from '../errors.ts';
import { registerSecret } from './registry.ts';

/** Looks a named value up (secrets file, then environment); undefined when neither has it. */
export type SecretLookup = (name: string) => string | undefined;

/** Parse dotenv text into names and values (SECRET_ERR_FILE naming the line number of a bad line, never its value). */
export function parseDotenv(text: string, file: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/.exec(line);
    if (!m) throw new VncuaError('SECRET_ERR_FILE', `Secrets file ${file}, line ${i + 1}: not NAME=value.`, { details: { file, line: i + 1 } });
    let v = m[2]!;
    if ((v.startsWith('"') && v.endsWith('"') && v.length >= 2) || (v.startsWith("'") && v.endsWith("'") && v.length >= 2)) v = v.slice(1, -1);
    out[m[1]!] = v;
  }
  return out;
}

/** Read a secrets file (JSON or dotenv, see the file comment); SECRET_ERR_FILE when unreadable or malformed. */
export function readSecretsFile(file: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new VncuaError('SECRET_ERR_FILE', `Secrets file ${file} could not be read (${(e as NodeJS.ErrnoException).code ?? 'error'}); give a readable .json or .env file.`, {
      cause: e,
      details: { file },
    });
  }
  if (!file.toLowerCase().endsWith('.json')) return parseDotenv(text, file);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new VncuaError('SECRET_ERR_FILE', `Secrets file ${file} is not valid JSON; it must be an object of names to string values.`, { details: { file } });
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new VncuaError('SECRET_ERR_FILE', `Secrets file ${file} must hold a JSON object of names to string values.`, { details: { file } });
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) {
    if (typeof v !== 'string') throw new VncuaError('SECRET_ERR_FILE', `Secrets file ${file}: the value of ${k} is not a string.`, { details: { file, name: k } });
    out[k] = v;
  }
  return out;
}

/** The lookup over `file` (if any) then `env` (default process.env). */
export function secretLookup(o: { secretsFile?: string | undefined; env?: Record<string, string | undefined> } = {}): SecretLookup {
  const fromFile = o.secretsFile ? readSecretsFile(o.secretsFile) : {};
  const env = o.env ?? process.env;
  return (name) => (Object.hasOwn(fromFile, name) ? fromFile[name] : env[name]);
}

/** What a `secrets` map entry may be: `{ env: NAME }` (task files, configs, the TS API) or, from the TS API only, the value itself. */
export type SecretRef = string | { env: string };

/**
 * Resolve a `secrets` map (name → reference) into name → value, registering each. SECRET_ERR_MISSING names the entry
 * and its variable; SECRET_ERR_INLINE when `allowLiterals` is false (a task file) and an entry gives a value itself.
 */
export function resolveSecretsMap(map: Record<string, SecretRef> | undefined, lookup: SecretLookup, o: { allowLiterals: boolean; where: string }): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, ref] of Object.entries(map ?? {})) {
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) {
      throw new VncuaError('SECRET_ERR_BAD_NAME', `${o.where} secrets: the name "${name}" may hold only letters, digits, _, . and -.`, { details: { name } });
    }
    let value: string | undefined;
    if (typeof ref === 'string') {
      if (!o.allowLiterals) throw inlineSecret(`${o.where} secrets.${name}`);
      value = ref;
    } else if (typeof ref === 'object' && ref !== null && typeof ref.env === 'string' && Object.keys(ref).length === 1) {
      value = lookup(ref.env);
      if (value === undefined || value === '') {
        throw new VncuaError(
          'SECRET_ERR_MISSING',
          `${o.where} secrets.${name}: the environment variable ${ref.env} is not set (nor in the secrets file); set it, or add it to the secrets file.`,
          { details: { name, env: ref.env } },
        );
      }
    } else {
      throw new VncuaError('SECRET_ERR_BAD_NAME', `${o.where} secrets.${name}: give { "env": "VARIABLE_NAME" }.`, { details: { name } });
    }
    registerSecret(name, value);
    out.set(name, value);
  }
  return out;
}

/** SECRET_ERR_INLINE for `field`: a task file or config gives a secret value itself (the value is never repeated). */
export function inlineSecret(field: string): VncuaError {
  return new VncuaError(
    'SECRET_ERR_INLINE',
    `${field} gives a secret value in the task or config itself; refused. Name an environment variable instead ({ "env": "NAME" }, or the binding's …Env field) and set it, or put it in a secrets file.`,
    { details: { field } },
  );
}
