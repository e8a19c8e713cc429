/**
 * scripts/setup-docker.sh's decisions and its one-line coded errors, against a fake `docker` CLI first
 * on PATH (a shell script that answers as the real one does and logs every call): an up-to-date image
 * is not rebuilt, a stale or missing one is, --check changes nothing, a daemon behind DOCKER_HOST that
 * does not answer is DOCKER_ERR_DAEMON, a failing build is DOCKER_ERR_BUILD_FAILED with the end of its
 * log. The real engine is exercised by eval/providers/docker.desktop.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contextHash } from '../eval/providers/docker.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** A fake docker CLI: `version` answers unless $FAKE_NO_DAEMON, the image's label is $FAKE_LABEL (missing when unset), build fails when $FAKE_BUILD_FAILS. */
const FAKE_DOCKER = `#!/bin/bash
echo "$*" >>"$FAKE_LOG"
case "$1" in
  version) [ -z "$FAKE_NO_DAEMON" ] || { echo "Cannot connect to the Docker daemon at $DOCKER_HOST. Is the docker daemon running?" >&2; exit 1; }; echo 20.10.24 ;;
  image)
    shift 2
    if [ "$1" = --format ]; then fmt=$2; shift 2; fi
    case "$1" in
      debian:bookworm-slim) echo sha256:base ;;
      *) [ -n "$FAKE_LABEL" ] || { echo "Error: No such image: $1" >&2; exit 1; }
         case "$fmt" in *Size*) echo 653000000 ;; *) echo "$FAKE_LABEL" ;; esac ;;
    esac ;;
  build) if [ -n "$FAKE_BUILD_FAILS" ]; then echo "E: Unable to locate package chromium-boom"; exit 100; fi; echo "Successfully built abc" ;;
  *) echo "unexpected: $*" >&2; exit 1 ;;
esac
`;

describe('scripts/setup-docker.sh', () => {
  let dir: string;
  let log: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vncua-setup-docker-'));
    log = join(dir, 'calls.log');
    await writeFile(join(dir, 'docker'), FAKE_DOCKER, { mode: 0o755 });
    // The daemon exists on this fake machine.
    await writeFile(join(dir, 'dockerd'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    await writeFile(log, '');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function setup(args: string[], env: Record<string, string>): { status: number | null; stderr: string } {
    const r = spawnSync('bash', [join(ROOT, 'scripts/setup-docker.sh'), ...args], {
      encoding: 'utf8',
      env: { PATH: `${dir}:${process.env.PATH}`, HOME: dir, TMPDIR: dir, FAKE_LOG: log, ...env },
      timeout: 60_000,
    });
    return { status: r.status, stderr: r.stderr };
  }
  const calls = async () => (await readFile(log, 'utf8')).trim().split('\n');

  it('an image built from these docker/ files is up to date: no build', async () => {
    const r = setup([], { FAKE_LABEL: contextHash() });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/vncua-desktop is up to date \(653 MB\)/);
    expect((await calls()).some((c) => c.startsWith('build'))).toBe(false);
  });

  it('a stale image is rebuilt, labelled with the hash of these files, on the host network', async () => {
    const r = setup([], { FAKE_LABEL: '0123456789abcdef' });
    expect(r.status, r.stderr).toBe(0);
    const build = (await calls()).find((c) => c.startsWith('build'));
    expect(build).toBe(`build --network host --label vncua.context=${contextHash()} -t vncua-desktop docker/`);
  });

  it('--check changes nothing and names the missing piece', async () => {
    const missing = setup(['--check'], {});
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/^setup-docker: DOCKER_ERR_NO_IMAGE: the image vncua-desktop is missing; run: npm run setup:docker$/m);
    const stale = setup(['--check'], { FAKE_LABEL: '0123456789abcdef' });
    expect(stale.status).toBe(1);
    expect(stale.stderr).toMatch(/DOCKER_ERR_NO_IMAGE: the image vncua-desktop was built from other docker\/ files/);
    expect((await calls()).some((c) => c.startsWith('build'))).toBe(false);
  });

  it('a daemon behind DOCKER_HOST that does not answer: DOCKER_ERR_DAEMON, nothing started', async () => {
    const r = setup([], { FAKE_NO_DAEMON: '1', DOCKER_HOST: 'tcp://10.0.0.9:2375' });
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n').pop()).toBe(
      'setup-docker: DOCKER_ERR_DAEMON: DOCKER_HOST=tcp://10.0.0.9:2375 does not answer; start that daemon, or unset DOCKER_HOST to use a local one',
    );
  });

  it('a failing build: DOCKER_ERR_BUILD_FAILED, with the end of the build log and where the whole log is', async () => {
    const r = setup([], { FAKE_BUILD_FAILS: '1' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('E: Unable to locate package chromium-boom');
    expect(r.stderr).toMatch(/setup-docker: DOCKER_ERR_BUILD_FAILED: docker build failed \(full log: .*vncua-docker-build\.\w+\); fix it, then run: npm run setup:docker/);
  });

  it('bad arguments: exit 2', () => {
    const r = setup(['--frobnicate'], {});
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown argument '--frobnicate'");
  });
});
