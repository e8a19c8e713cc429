/**
 * Providers without a desktop: the docker provider's command line, `docker port` parsing and the
 * clear errors when docker is missing or its daemon unreachable (runSuite refuses before starting
 * anything); the remote provider's endpoints file (one issue per bad entry) and its size matching.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../../harness/errors.ts';
import { runSuite } from '../runner.ts';
import { containerUrl, dockerProvider, dockerRunArgs, parseDockerPort, parseReadyLog } from './docker.ts';
import { parseEndpoints, remoteProvider } from './remote.ts';

describe('docker provider', () => {
  it('publishes the WebSocket and CDP ports on 127.0.0.1 at host ports the OS picks, labels the container with its owner', () => {
    const args = dockerRunArgs({ image: 'vncua-desktop', name: 'vncua-eval-1-1', width: 1920, height: 1080, url: 'http://127.0.0.1:8000/pages/a.html?x=1', ownerPid: 4242 });
    expect(args.slice(0, 3)).toEqual(['run', '--detach', '--rm']);
    const pairs = (flag: string) => args.flatMap((a, i) => (a === flag ? [args[i + 1]] : []));
    expect(pairs('--publish')).toEqual(['127.0.0.1::6080', '127.0.0.1::9222']);
    expect(pairs('--label')).toEqual(['vncua.eval.owner=4242']);
    expect(pairs('--name')).toEqual(['vncua-eval-1-1']);
    expect(pairs('--add-host')).toEqual(['host.docker.internal:host-gateway']);
    // start.sh's arguments come after the image.
    expect(args.slice(args.indexOf('vncua-desktop'))).toEqual(['vncua-desktop', '--size', '1920x1080', '--url', 'http://host.docker.internal:8000/pages/a.html?x=1']);
  });

  it('rewrites only loopback URLs for the container', () => {
    expect(containerUrl('http://localhost:9/a')).toBe('http://host.docker.internal:9/a');
    expect(containerUrl('https://example.org/a')).toBe('https://example.org/a');
    expect(containerUrl('about:blank')).toBe('about:blank');
  });

  it('reads the host port from docker port output, and the ready line from the logs', () => {
    expect(parseDockerPort('127.0.0.1:49153\n')).toBe(49153);
    expect(parseDockerPort('[::1]:49160\n127.0.0.1:49161\n')).toBe(49161);
    expect(parseDockerPort('[::]:5000\n')).toBe(5000);
    expect(() => parseDockerPort('')).toThrow();
    expect(parseReadyLog('')).toBeUndefined();
    expect(
      parseReadyLog('start.sh: hello\n{"vncUrl":"ws://127.0.0.1:6080/0123456789abcdef0123456789abcdef","cdpUrl":"http://127.0.0.1:9222/0123456789abcdef0123456789abcdef/"}\n'),
    ).toEqual({
      ready: true,
      vncPath: '/0123456789abcdef0123456789abcdef',
      cdpPath: '/0123456789abcdef0123456789abcdef/',
    });
    expect(() => parseReadyLog('{"error":"DESKTOP_ERR_MISSING_BINARY","message":"no chromium"}\n')).toThrow(expect.objectContaining({ code: 'DESKTOP_ERR_START_FAILED' }));
  });

  it('a missing docker CLI or an unreachable daemon is EVAL_ERR_PROVIDER_UNAVAILABLE before any task runs', async () => {
    const missing = dockerProvider({ docker: '/nonexistent/bin/docker' });
    await expect(missing.prepare!({ sizes: [] })).rejects.toMatchObject({ code: 'EVAL_ERR_PROVIDER_UNAVAILABLE', details: { program: '/nonexistent/bin/docker' } });
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
      expect(isVncuaError(err, 'EVAL_ERR_PROVIDER_UNAVAILABLE')).toBe(true);
      expect(built).toBe(0);
      // The real docker CLI when it is installed, pointed at a socket where no daemon listens.
      const unreachable = dockerProvider({ env: { DOCKER_HOST: `unix://${join(out, 'no-daemon.sock')}` } });
      await expect(unreachable.prepare!({ sizes: [] })).rejects.toMatchObject({ code: 'EVAL_ERR_PROVIDER_UNAVAILABLE' });
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
