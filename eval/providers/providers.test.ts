/**
 * Providers without a desktop: the docker provider's command line, `docker port` parsing, owner
 * labels, the image's context hash and the clear errors when docker is missing or its daemon unreachable (runSuite refuses before starting
 * anything); the remote provider's endpoints file (one issue per bad entry) and its size matching.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../../harness/errors.ts';
import { runSuite } from '../runner.ts';
import { CONTEXT_FILES, containerUrl, contextHash, dockerProvider, dockerRunArgs, ownerAlive, ownerId, parseInspect, parseReadyLog } from './docker.ts';
import { parseEndpoints, remoteProvider } from './remote.ts';

describe('docker provider', () => {
  it('publishes the WebSocket and CDP ports on 127.0.0.1 at host ports the OS picks, labels the container with its owner', () => {
    const args = dockerRunArgs({ image: 'vncua-desktop', name: 'vncua-eval-1-1', width: 1920, height: 1080, url: 'http://127.0.0.1:8000/pages/a.html?x=1', owner: '4242.77' });
    // Attached, its stdin our pipe: the container stops and is removed when the runner goes.
    expect(args.slice(0, 4)).toEqual(['run', '--interactive', '--rm', '--sig-proxy=false']);
    expect(args).not.toContain('--detach');
    const pairs = (flag: string) => args.flatMap((a, i) => (a === flag ? [args[i + 1]] : []));
    expect(pairs('--publish')).toEqual(['127.0.0.1::6080', '127.0.0.1::9222']);
    expect(pairs('--label')).toEqual(['vncua.eval.owner=4242.77']);
    expect(pairs('--name')).toEqual(['vncua-eval-1-1']);
    expect(pairs('--add-host')).toEqual(['host.docker.internal:host-gateway']);
    // start.sh's arguments come after the image.
    expect(args.slice(args.indexOf('vncua-desktop'))).toEqual(['vncua-desktop', '--size', '1920x1080', '--url', 'http://host.docker.internal:8000/pages/a.html?x=1']);
  });

  it('rewrites only loopback URLs for the container', () => {
    expect(containerUrl('http://localhost:9/a')).toBe('http://host.docker.internal:9/a');
    expect(containerUrl('http://172.17.0.1:9/a')).toBe('http://172.17.0.1:9/a');
    expect(containerUrl('https://example.org/a')).toBe('https://example.org/a');
    expect(containerUrl('about:blank')).toBe('about:blank');
  });

  it('reads the container id and host ports from docker inspect, and the ready line (or start.sh error line, with its code) from the logs', () => {
    const id = 'a'.repeat(64);
    const inspect = parseInspect(`${id} {"6080/tcp":[{"HostIp":"127.0.0.1","HostPort":"49153"}],"9222/tcp":[{"HostIp":"127.0.0.1","HostPort":"49154"}]}\n`);
    expect(inspect.id).toBe(id);
    expect([...inspect.ports]).toEqual([
      [6080, 49153],
      [9222, 49154],
    ]);
    // An IPv4 binding wins over an IPv6 one, whichever comes first; an unpublished port has null.
    expect(parseInspect(`${id} {"6080/tcp":[{"HostIp":"::1","HostPort":"49160"},{"HostIp":"127.0.0.1","HostPort":"49161"}]}`).ports.get(6080)).toBe(49161);
    expect(parseInspect(`${id} {"6080/tcp":[{"HostIp":"127.0.0.1","HostPort":"49161"},{"HostIp":"::1","HostPort":"49160"}]}`).ports.get(6080)).toBe(49161);
    expect(parseInspect(`${id} {"6080/tcp":null}`).ports.size).toBe(0);
    expect(() => parseInspect('Error: No such object: x')).toThrow(expect.objectContaining({ code: 'DESKTOP_ERR_START_FAILED' }));
    expect(parseReadyLog('')).toBeUndefined();
    expect(parseReadyLog('{"vncUrl":1}\nnot json {\n')).toBeUndefined();
    expect(
      parseReadyLog('start.sh: hello\n{"vncUrl":"ws://127.0.0.1:6080/0123456789abcdef0123456789abcdef","cdpUrl":"http://127.0.0.1:9222/0123456789abcdef0123456789abcdef/"}\n'),
    ).toEqual({
      ready: true,
      vncPath: '/0123456789abcdef0123456789abcdef',
      cdpPath: '/0123456789abcdef0123456789abcdef/',
    });
    expect(() => parseReadyLog('{"error":"DESKTOP_ERR_MISSING_BINARY","message":"no chromium"}\n')).toThrow(expect.objectContaining({ code: 'DESKTOP_ERR_MISSING_BINARY' }));
    expect(() => parseReadyLog('{"error":"SOMETHING_NEW","message":"x"}\n')).toThrow(expect.objectContaining({ code: 'DESKTOP_ERR_START_FAILED' }));
  });

  it("names its owner by pid and start time, so a reused pid does not keep a dead runner's containers", () => {
    const me = ownerId();
    expect(me).toMatch(new RegExp(`^${process.pid}\\.\\d+$`));
    expect(ownerAlive(me)).toBe(true);
    expect(ownerAlive(String(process.pid))).toBe(true);
    const [pid, ticks] = me.split('.');
    expect(ownerAlive(`${pid}.${Number(ticks) + 1}`)).toBe(false);
    expect(ownerAlive('999999999.1')).toBe(false);
    expect(ownerAlive('garbage')).toBe(false);
  });

  it('hashes the docker/ files it is built from as scripts/setup-docker.sh does (cat FILES | sha256sum)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vncua-ctx-'));
    try {
      for (const [i, f] of CONTEXT_FILES.entries()) await writeFile(join(dir, f), `file ${i}\n`);
      const expected = createHash('sha256')
        .update(CONTEXT_FILES.map((_, i) => `file ${i}\n`).join(''))
        .digest('hex')
        .slice(0, 16);
      expect(contextHash(dir)).toBe(expected);
      const sh = execFileSync('bash', ['-c', `cd "$1" && cat ${CONTEXT_FILES.join(' ')} | sha256sum | cut -c1-16`, 'bash', dir], { encoding: 'utf8' }).trim();
      expect(sh).toBe(expected);
      // The checkout's own docker/ folder is the default.
      expect(contextHash()).toMatch(/^[0-9a-f]{16}$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a missing docker CLI is DOCKER_ERR_NOT_INSTALLED, an unreachable daemon DOCKER_ERR_DAEMON, both before any task runs', async () => {
    const missing = dockerProvider({ docker: '/nonexistent/bin/docker' });
    await expect(missing.prepare!({ sizes: [] })).rejects.toMatchObject({ code: 'DOCKER_ERR_NOT_INSTALLED', details: { program: '/nonexistent/bin/docker' } });
    const out = await mkdtemp(join(tmpdir(), 'vncua-docker-'));
    try {
      let built = 0;
      const err = await runSuite({
        tasks: [{ id: 't', goal: 'g', url: 'http://127.0.0.1:1/', success: { sentinel: 'x' }, group: 't' }],
        agent: {
          name: 'a',
          build: () => {
            built++;
            throw new Error('never built');
          },
        },
        out,
        provider: missing,
      }).catch((e: unknown) => e);
      expect(isVncuaError(err, 'DOCKER_ERR_NOT_INSTALLED')).toBe(true);
      expect((err as Error).message).toContain('npm run setup:docker');
      expect(built).toBe(0);
      // A docker CLI that answers nothing but fails the way the real one does with no daemon.
      const fake = join(out, 'docker');
      await writeFile(fake, '#!/bin/sh\necho "Cannot connect to the Docker daemon at unix:///nowhere.sock. Is the docker daemon running?" >&2\nexit 1\n', { mode: 0o755 });
      const unreachable = dockerProvider({ docker: fake });
      const e2 = await unreachable.prepare!({ sizes: [] }).catch((e: unknown) => e);
      expect(isVncuaError(e2, 'DOCKER_ERR_DAEMON')).toBe(true);
      expect((e2 as Error).message).toMatch(/Cannot connect to the Docker daemon.*npm run setup:docker/);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});

describe('remote provider', () => {
  it('reports one issue per bad endpoint, with index and field', () => {
    let issues: Array<[number, string]> = [];
    try {
      parseEndpoints([
        { vncUrl: 'ws://127.0.0.1:1', cdpUrl: 'http://127.0.0.1:2', size: '1280x800' },
        { vncUrl: 'http://nope', cdpUrl: 'http://127.0.0.1:2' },
        { vncUrl: 'ws://127.0.0.1:1', cdpUrl: 'ftp://x' },
        { vncUrl: 'ws://127.0.0.1:1' },
        { vncUrl: 'ws://127.0.0.1:1', cdpUrl: 'http://127.0.0.1:2', size: 'big' },
        { vncUrl: 'ws://127.0.0.1:1', cdpUrl: 'http://127.0.0.1:2', extra: 1 },
      ]);
    } catch (e) {
      if (!isVncuaError(e, 'EVAL_ERR_BAD_ENDPOINTS')) throw e;
      issues = (e.details!.issues as Array<{ index: number; field: string }>).map((i) => [i.index, i.field]);
    }
    expect(issues).toEqual([
      [1, 'vncUrl'],
      [2, 'cdpUrl'],
      [3, 'cdpUrl'],
      [4, 'size'],
      [5, 'extra'],
    ]);
    expect(() => parseEndpoints([])).toThrow(expect.objectContaining({ code: 'EVAL_ERR_BAD_ENDPOINTS' }));
  });

  it('takes a password from passwordEnv or passwordFile (relative to the endpoints file), never from a URL; messages never repeat it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vncua-endpoints-'));
    try {
      await writeFile(join(dir, 'vnc.pw'), 'file-s3cret\n', { mode: 0o600 });
      const ok = parseEndpoints(
        [
          { vncUrl: 'ws://127.0.0.1:1/tok', cdpUrl: 'http://127.0.0.1:2/tok/', passwordEnv: 'REMOTE_PW' },
          { vncUrl: 'ws://127.0.0.1:3/tok', cdpUrl: 'http://127.0.0.1:4/tok/', passwordFile: 'vnc.pw' },
          { vncUrl: 'ws://127.0.0.1:5/tok', cdpUrl: 'http://127.0.0.1:6/tok/' },
        ],
        'endpoints.json',
        { baseDir: dir, env: { REMOTE_PW: 'env-s3cret' } },
      );
      expect(ok.map((e) => e.password)).toEqual(['env-s3cret', 'file-s3cret', undefined]);

      let err: unknown;
      try {
        parseEndpoints(
          [
            { vncUrl: 'ws://127.0.0.1:1', cdpUrl: 'http://127.0.0.1:2', passwordEnv: 'UNSET_PW' },
            { vncUrl: 'ws://127.0.0.1:1', cdpUrl: 'http://127.0.0.1:2', passwordEnv: 'EMPTY_PW' },
            { vncUrl: 'ws://127.0.0.1:1', cdpUrl: 'http://127.0.0.1:2', passwordFile: 'missing.pw' },
            { vncUrl: 'ws://me:url-s3cret@127.0.0.1:1/', cdpUrl: 'http://127.0.0.1:2' },
            { vncUrl: 'ws://127.0.0.1:1', cdpUrl: 'http://me:url-s3cret@127.0.0.1:2/' },
            { vncUrl: 'ws://127.0.0.1:1', cdpUrl: 'http://127.0.0.1:2', password: 'inline-s3cret' },
          ],
          'endpoints.json',
          { baseDir: dir, env: { EMPTY_PW: '' } },
        );
      } catch (e) {
        err = e;
      }
      expect(isVncuaError(err, 'EVAL_ERR_BAD_ENDPOINTS')).toBe(true);
      const issues = (err as { details: { issues: Array<{ index: number; field: string }> } }).details.issues;
      expect(issues.map((i) => [i.index, i.field])).toEqual([
        [0, 'passwordEnv'],
        [1, 'passwordEnv'],
        [2, 'passwordFile'],
        [3, 'vncUrl'],
        [4, 'cdpUrl'],
        [5, 'password'],
      ]);
      expect(JSON.stringify(issues) + (err as Error).message).not.toContain('s3cret');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a resolution no endpoint has; its capacity is the number of endpoints', async () => {
    const p = remoteProvider(
      parseEndpoints([
        { vncUrl: 'ws://127.0.0.1:1', cdpUrl: 'http://127.0.0.1:2', size: '1280x800' },
        { vncUrl: 'ws://127.0.0.1:3', cdpUrl: 'http://127.0.0.1:4', size: '1280x800' },
      ]),
    );
    expect(p.capacity).toBe(2);
    await expect(p.prepare!({ sizes: [{ width: 1280, height: 800 }] })).resolves.toBeUndefined();
    await expect(p.prepare!({ sizes: [{ width: 1920, height: 1080 }] })).rejects.toMatchObject({ code: 'EVAL_ERR_PROVIDER_UNAVAILABLE' });
  });
});
