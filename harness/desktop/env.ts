/**
 * What launchDesktop() hands the start script: an allowlisted environment (no API keys, no
 * passwords: docker/start.sh scrubs its parts' environments again), and the VNC password,
 * checked here so that an empty one is an error, never "no password".
 */
import { VncuaError } from '../errors.ts';

/** Names passed from this process's environment to the start script (besides LC_*, XDG_* and the proxies). */
const PASSED = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR', 'FONTCONFIG_FILE', 'FONTCONFIG_PATH'];
/** The start script's own settings: other programs for each part. */
const PROGRAMS = ['VNCUA_XVNC', 'VNCUA_XVFB', 'VNCUA_X11VNC', 'VNCUA_WM', 'VNCUA_WEBSOCKIFY', 'VNCUA_CHROMIUM'];
const PROXIES = /^(https?|no|all)_proxy$/i;

/** The start script's environment: the allowlisted part of `base`, then `extra` (undefined removes; VNCUA_VNC_PASSWORD never passes). */
export function scrubbedEnv(base: NodeJS.ProcessEnv, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    const allowed = PASSED.includes(name) || PROGRAMS.includes(name) || name.startsWith('LC_') || name.startsWith('XDG_') || (PROXIES.test(name) && !value.includes('@')); // a proxy URL with user:password@ is a secret
    if (allowed) out[name] = value;
  }
  for (const [name, value] of Object.entries(extra)) {
    if (name === 'VNCUA_VNC_PASSWORD') continue;
    if (value === undefined) delete out[name];
    else out[name] = value;
  }
  return out;
}

function badPassword(message: string, source: string): VncuaError {
  return new VncuaError('DESKTOP_ERR_BAD_PASSWORD', message, { details: { source } });
}

/**
 * The desktop's VNC password: `password` when given, else VNCUA_VNC_PASSWORD from `env` (when it
 * names the variable, even as undefined), else from process.env; undefined when none is set.
 * DESKTOP_ERR_BAD_PASSWORD for an empty one or one with a line break; messages never repeat it.
 */
export function desktopPassword(password: string | undefined, env: Record<string, string | undefined> | undefined): string | undefined {
  let source = 'password option';
  let value = password;
  if (value === undefined) {
    source = 'VNCUA_VNC_PASSWORD';
    value = env && 'VNCUA_VNC_PASSWORD' in env ? env.VNCUA_VNC_PASSWORD : process.env.VNCUA_VNC_PASSWORD;
    if (value === undefined) return undefined;
  }
  if (typeof value !== 'string' || value === '') {
    throw badPassword(
      source === 'VNCUA_VNC_PASSWORD'
        ? 'VNCUA_VNC_PASSWORD is set but empty: set a password, or unset it for a desktop without VNC Authentication.'
        : 'The VNC password is empty: give a non-empty password, or leave the option out for a desktop without VNC Authentication.',
      source,
    );
  }
  if (/[\r\n\0]/.test(value)) throw badPassword(`The VNC password (from the ${source}) holds a line break or a NUL character; VNC passwords are one line.`, source);
  return value;
}
