/**
 * A VNC password from where it may come from: a file (first line) or an environment variable,
 * never the command line (`ps` shows every process's arguments to every user). Missing, empty
 * or unreadable is DESKTOP_ERR_BAD_PASSWORD, never "no password"; messages name the source
 * (file path, variable name), never the password.
 */
import { readFileSync, statSync } from 'node:fs';
import { VncuaError } from '../errors.ts';

/** Where to read a password: a file, or an environment variable (VNCUA_VNC_PASSWORD when neither is given). */
export interface PasswordSource {
  /** A file whose first line is the password (mode 0600 recommended). */
  file?: string | undefined;
  /** The name of an environment variable holding the password. */
  env?: string | undefined;
}

/** The variable read when no source is given. */
export const PASSWORD_ENV = 'VNCUA_VNC_PASSWORD';

function bad(message: string, details: Record<string, unknown>): VncuaError {
  return new VncuaError('DESKTOP_ERR_BAD_PASSWORD', message, { details });
}

/**
 * Read the password of `source`: its file's first line, or its variable; with neither, VNCUA_VNC_PASSWORD
 * if set (undefined if not). `warn` hears about a file other users can read.
 */
export function readPassword(source: PasswordSource, opts: { env?: NodeJS.ProcessEnv; warn?: (message: string) => void } = {}): string | undefined {
  const env = opts.env ?? process.env;
  if (source.file !== undefined && source.env !== undefined) {
    throw bad('Give the password once: a password file or an environment variable, not both.', { file: source.file, env: source.env });
  }
  let value: string | undefined;
  if (source.file !== undefined) {
    const file = source.file;
    try {
      value = readFileSync(file, 'utf8').split(/\r?\n/, 1)[0] ?? '';
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code ?? 'unreadable';
      throw bad(`Cannot read the password file ${file} (${why}): write the password on its first line (chmod 600).`, { file, reason: why });
    }
    if (value === '') throw bad(`The password file ${file} is empty (its first line is the password).`, { file });
    try {
      const st = statSync(file);
      if (st.isFile() && (st.mode & 0o077) !== 0) {
        opts.warn?.(`the password file ${file} is readable by other users (mode ${(st.mode & 0o777).toString(8)}): chmod 600 it`);
      }
    } catch {
      // read above; a stat failure changes nothing
    }
    return value;
  }
  const name = source.env ?? PASSWORD_ENV;
  value = env[name];
  if (value === undefined) {
    if (source.env !== undefined) throw bad(`The environment variable ${name} holding the password is not set.`, { env: name });
    return undefined;
  }
  if (value === '') {
    throw bad(`${name} is set but empty: set the password${source.env === undefined ? ', or unset it for no password' : ''}.`, { env: name });
  }
  if (/[\r\n\0]/.test(value)) throw bad(`${name} holds a line break or a NUL character; a VNC password is one line.`, { env: name });
  return value;
}
