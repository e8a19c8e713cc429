import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../errors.ts';
import { desktopPassword, scrubbedEnv } from './env.ts';

describe('scrubbedEnv', () => {
  it('passes only the allowlist: no API keys, no passwords, no proxy with credentials', () => {
    const env = scrubbedEnv(
      {
        PATH: '/usr/bin',
        HOME: '/home/me',
        LANG: 'C.UTF-8',
        LC_TIME: 'C',
        TMPDIR: '/tmp/x',
        XDG_RUNTIME_DIR: '/run/user/1',
        VNCUA_CHROMIUM: '/opt/chrome',
        http_proxy: 'http://proxy:3128',
        https_proxy: 'http://user:pw@proxy:3128',
        OPENAI_API_KEY: 'sk-1',
        ANTHROPIC_API_KEY: 'sk-ant-1',
        VNCUA_VNC_PASSWORD: 'pw',
        AWS_SECRET_ACCESS_KEY: 'x',
      },
      { VNCUA_XVNC: '/opt/Xvnc', LANG: undefined, VNCUA_VNC_PASSWORD: 'pw2' },
    );
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/me',
      LC_TIME: 'C',
      TMPDIR: '/tmp/x',
      XDG_RUNTIME_DIR: '/run/user/1',
      VNCUA_CHROMIUM: '/opt/chrome',
      http_proxy: 'http://proxy:3128',
      VNCUA_XVNC: '/opt/Xvnc',
    });
  });
});

describe('desktopPassword', () => {
  const code = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      if (isVncuaError(e)) return e.code;
      throw e;
    }
    return undefined;
  };

  it('the option wins; else VNCUA_VNC_PASSWORD of env (even undefined there), else of process.env', () => {
    expect(desktopPassword('a', { VNCUA_VNC_PASSWORD: 'b' })).toBe('a');
    expect(desktopPassword(undefined, { VNCUA_VNC_PASSWORD: 'b' })).toBe('b');
    expect(desktopPassword(undefined, { VNCUA_VNC_PASSWORD: undefined })).toBeUndefined();
  });

  it('empty, or with a line break: DESKTOP_ERR_BAD_PASSWORD', () => {
    expect(code(() => desktopPassword('', undefined))).toBe('DESKTOP_ERR_BAD_PASSWORD');
    expect(code(() => desktopPassword(undefined, { VNCUA_VNC_PASSWORD: '' }))).toBe('DESKTOP_ERR_BAD_PASSWORD');
    expect(code(() => desktopPassword('a\nb', undefined))).toBe('DESKTOP_ERR_BAD_PASSWORD');
  });
});
