import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isVncuaError } from '../errors.ts';
import { readPassword } from './password.ts';

const dir = mkdtempSync(join(tmpdir(), 'vncua-password-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function codeOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (isVncuaError(e)) {
      expect(e.message).not.toContain('s3cret'); // never repeated
      return e.code;
    }
    throw e;
  }
  return undefined;
}

describe('readPassword', () => {
  it("reads a file's first line, or a variable; with neither, VNCUA_VNC_PASSWORD when set", () => {
    const file = join(dir, 'pw');
    writeFileSync(file, 's3cret-file\nsecond line\n', { mode: 0o600 });
    expect(readPassword({ file })).toBe('s3cret-file');
    writeFileSync(file, 's3cret-no-newline', { mode: 0o600 });
    expect(readPassword({ file })).toBe('s3cret-no-newline');
    expect(readPassword({ env: 'MY_PW' }, { env: { MY_PW: 's3cret-env' } })).toBe('s3cret-env');
    expect(readPassword({}, { env: { VNCUA_VNC_PASSWORD: 's3cret-default' } })).toBe('s3cret-default');
    expect(readPassword({}, { env: {} })).toBeUndefined();
  });

  it('missing, empty or unreadable is DESKTOP_ERR_BAD_PASSWORD, never "no password"', () => {
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\nnot the first line s3cret\n', { mode: 0o600 });
    expect(codeOf(() => readPassword({ file: join(dir, 'missing') }))).toBe('DESKTOP_ERR_BAD_PASSWORD');
    expect(codeOf(() => readPassword({ file: empty }))).toBe('DESKTOP_ERR_BAD_PASSWORD');
    expect(codeOf(() => readPassword({ file: dir }))).toBe('DESKTOP_ERR_BAD_PASSWORD');
    expect(codeOf(() => readPassword({ env: 'UNSET_PW' }, { env: {} }))).toBe('DESKTOP_ERR_BAD_PASSWORD');
    expect(codeOf(() => readPassword({ env: 'EMPTY_PW' }, { env: { EMPTY_PW: '' } }))).toBe('DESKTOP_ERR_BAD_PASSWORD');
    expect(codeOf(() => readPassword({}, { env: { VNCUA_VNC_PASSWORD: '' } }))).toBe('DESKTOP_ERR_BAD_PASSWORD');
    expect(codeOf(() => readPassword({}, { env: { VNCUA_VNC_PASSWORD: 'two\ns3cret' } }))).toBe('DESKTOP_ERR_BAD_PASSWORD');
    expect(codeOf(() => readPassword({ file: empty, env: 'X' }, { env: { X: 's3cret' } }))).toBe('DESKTOP_ERR_BAD_PASSWORD');
  });

  it('warns when other users can read the file', () => {
    const file = join(dir, 'open');
    writeFileSync(file, 'pw');
    chmodSync(file, 0o644);
    const warnings: string[] = [];
    expect(readPassword({ file }, { warn: (m) => warnings.push(m) })).toBe('pw');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('chmod 600');
    chmodSync(file, 0o600);
    readPassword({ file }, { warn: (m) => warnings.push(m) });
    expect(warnings).toHaveLength(1);
  });
});
