import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isVncuaError } from '../../../harness/errors.ts';
import { checkRelPath, resolveInside } from './paths.ts';

const code = (f: () => unknown) => {
  try {
    f();
    return 'ok';
  } catch (e) {
    return isVncuaError(e) ? e.code : String(e);
  }
};

describe('checkRelPath', () => {
  it('takes relative run dirs and file paths, as segments', () => {
    expect(checkRelPath('clicker/1280_800/ok-1', 'run')).toEqual(['clicker', '1280_800', 'ok-1']);
    expect(checkRelPath('clicker/1280_800/ok-1/3', 'run')).toEqual(['clicker', '1280_800', 'ok-1', '3']);
    expect(checkRelPath('recording/server.rfb.bin', 'file')).toEqual(['recording', 'server.rfb.bin']);
    expect(checkRelPath('.vncua-viewer/index.json', 'file')).toEqual(['.vncua-viewer', 'index.json']);
  });

  it.each([
    ['', 'run'],
    ['/etc/passwd', 'run'],
    ['../outside', 'run'],
    ['a/../../b', 'run'],
    ['a/./b', 'run'],
    ['a//b', 'run'],
    ['a/b/', 'run'],
    ['.vncua-queue/incoming/x', 'run'],
    ['agent/.hidden/t', 'run'],
    ['a\\..\\b', 'run'],
    ['a/b\u0000c', 'file'],
    ['a/\nb', 'file'],
    ['../x', 'file'],
    ['/abs', 'file'],
    [`a/${'x'.repeat(256)}`, 'file'],
  ] as const)('refuses %j as a %s path (QUEUE_ERR_BAD_PATH)', (p, kind) => {
    expect(code(() => checkRelPath(p, kind))).toBe('QUEUE_ERR_BAD_PATH');
  });

  it('refuses what is not a string', () => {
    expect(code(() => checkRelPath(undefined, 'run'))).toBe('QUEUE_ERR_BAD_PATH');
    expect(code(() => checkRelPath(['a'], 'file'))).toBe('QUEUE_ERR_BAD_PATH');
  });
});

describe('resolveInside', () => {
  let base: string;
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'vncua-paths-'));
    await mkdir(join(base, 'out', 'agent', 'real'), { recursive: true });
    await mkdir(join(base, 'elsewhere'));
    await symlink(join(base, 'elsewhere'), join(base, 'out', 'evil'));
    await symlink(join(base, 'out', 'agent'), join(base, 'out', 'alias'));
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  it('resolves a path under the root, existing or not', async () => {
    const out = join(base, 'out');
    expect(await resolveInside(out, ['agent', 'real', 't'])).toBe(join(out, 'agent', 'real', 't'));
    expect(await resolveInside(out, ['new', '1280_800', 't'])).toBe(join(out, 'new', '1280_800', 't'));
    // A symlink that stays inside the root is fine.
    expect(await resolveInside(out, ['alias', 'real', 't'])).toBe(join(out, 'alias', 'real', 't'));
  });

  it('refuses a path through a symlink that leads out of the root, and a symlink as the path itself', async () => {
    const out = join(base, 'out');
    await expect(resolveInside(out, ['evil', '1280_800', 't'])).rejects.toMatchObject({ code: 'QUEUE_ERR_BAD_PATH' });
    await expect(resolveInside(out, ['evil'])).rejects.toMatchObject({ code: 'QUEUE_ERR_BAD_PATH' });
    await expect(resolveInside(out, ['alias'])).rejects.toMatchObject({ code: 'QUEUE_ERR_BAD_PATH' });
  });
});
