/**
 * The docker provider on a real engine with the real image (`npm run setup:docker`): a container's
 * desktop (ports on 127.0.0.1 only, its start line in `docker logs`, VNC and CDP under its token,
 * removed on release); basic-suite tasks in containers through `vncua eval --provider docker` with 2
 * workers (every run succeeds, no container left); a SIGKILLed runner's containers gone with it, and
 * a leftover with a dead owner removed by the next run; bad input (no image, a stale image, a container that exits at start, a bad size) as coded errors
 * with no container left; and the same screenshots, pixel for pixel, from a container and a native
 * desktop showing the same pages.
 *
 * Skipped, with the reason printed, only where no engine or image can be had (scripts/test.sh runs
 * scripts/setup-docker.sh first, which installs and starts one where it can).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile, cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cdpAnswers } from '../../harness/cdp/page-socket.ts';
import { waitForPageReady } from '../../harness/cdp/page-ready.ts';
import { launchDesktop } from '../../harness/desktop/index.ts';
import { isVncuaError } from '../../harness/errors.ts';
import { connectVnc } from '../../harness/rfb/index.ts';
import { startStaticServer, type StaticServer } from '../static-server.ts';
import { CONTEXT_FILES, dockerBridgeGateway, dockerProvider, OWNER_LABEL } from './docker.ts';
import type { LeasedDesktop } from './types.ts';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const SUITE = join(ROOT, 'eval/suites/basic');
const SIZE = { width: 1280, height: 800 };

/** Why the docker tests cannot run here, or undefined (scripts/setup-docker.sh --check: engine answers, image up to date). */
function skipReason(): string | undefined {
  const r = spawnSync('bash', [join(ROOT, 'scripts/setup-docker.sh'), '--check'], { encoding: 'utf8', timeout: 60_000 });
  if (r.status === 0) return undefined;
  return (r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n').pop();
}

const reason = skipReason();
if (reason) console.warn(`[docker tests skipped] ${reason}`);

/** `docker ARGS`, stdout trimmed. */
function docker(...args: string[]): string {
  return execFileSync('docker', args, { encoding: 'utf8', timeout: 60_000 }).trim();
}

/** Containers (id and label) with the eval owner label whose owner is pid `pid`. */
function containersOf(pid: number): string[] {
  return docker('ps', '--all', '--filter', `label=${OWNER_LABEL}`, '--format', `{{.ID}} {{.Label "${OWNER_LABEL}"}}`)
    .split('\n')
    .filter((l) => l.split(' ')[1]?.split('.')[0] === String(pid))
    .map((l) => l.split(' ')[0]!);
}

/** Every published port binding of a container: "HOSTIP:PORT". */
function publishedBindings(id: string): string[] {
  const ports = JSON.parse(docker('inspect', '--format', '{{json .NetworkSettings.Ports}}', id)) as Record<string, Array<{ HostIp: string; HostPort: string }> | null>;
  return Object.values(ports).flatMap((b) => (b ?? []).map((x) => `${x.HostIp}:${x.HostPort}`));
}

/** Wait for `cond`, failing with `what` after `ms`. */
async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Run `vncua eval ARGS` in a child; resolves its exit code and output. */
function evalCli(args: string[], onSpawn?: (pid: number) => void): Promise<{ code: number | null; signal: NodeJS.Signals | null; text: string; pid: number }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/vncua.js'), 'eval', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (d) => (text += d));
  child.stderr.on('data', (d) => (text += d));
  onSpawn?.(child.pid!);
  return new Promise((res) => child.on('close', (code, signal) => res({ code, signal, text, pid: child.pid! })));
}

describe.skipIf(reason !== undefined)('the docker provider on a real engine', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vncua-docker-'));
  });
  afterAll(async () => {
    for (const id of containersOf(process.pid)) spawnSync('docker', ['rm', '--force', id]);
    await rm(dir, { recursive: true, force: true });
  });

  it('a container desktop: published on 127.0.0.1 only, its start line in docker logs, VNC and CDP under its token, removed on release', async () => {
    const provider = dockerProvider();
    await provider.prepare!({ sizes: [SIZE] });
    const lease = await provider.acquire({ size: SIZE, url: 'data:text/html,<h1>vncua</h1>' });
    const id = lease.info.container as string;
    try {
      await lease.ready;
      const bindings = publishedBindings(id);
      expect(bindings).toHaveLength(2);
      for (const b of bindings) expect(b).toMatch(/^127\.0\.0\.1:\d+$/);
      // The desktop's start line (start.sh's ready JSON) is the first line of its logs.
      const first = docker('logs', id).split('\n')[0]!;
      const line = JSON.parse(first) as { vncUrl: string; cdpUrl: string; width: number; height: number; server: string };
      expect(line).toMatchObject({ width: 1280, height: 800, server: 'xvnc' });
      expect(lease.vncUrl.endsWith(new URL(line.vncUrl).pathname)).toBe(true);
      // VNC answers under the token, at the requested size.
      const vnc = await connectVnc(lease.vncUrl, { timeoutMs: 30_000 });
      try {
        expect(vnc.resolution()).toEqual(SIZE);
      } finally {
        await vnc.close();
      }
      expect(await cdpAnswers(lease.cdpUrl, { timeoutMs: 10_000 })).toBe(true);
      // Without the token, CDP tells nothing.
      const port = new URL(lease.cdpUrl).port;
      const res = await fetch(`http://127.0.0.1:${port}/json/version`);
      expect(res.status).toBe(403);
      expect(await lease.health()).toBeNull();
    } finally {
      await lease.release();
    }
    expect(docker('ps', '--all', '--filter', `id=${id}`, '--quiet')).toBe('');
  }, 180_000);

  it('vncua eval --provider docker runs basic-suite tasks in containers with 2 workers: every run succeeds, every container is removed', async () => {
    const out = join(dir, 'suite');
    const only = ['click-button', 'drag-card', 'type-search', 'dropdown-native', 'scroll-find', 'form-signup'];
    let pid = 0;
    const seen = new Map<string, string[]>();
    let running = true;
    const run = evalCli(
      ['--tasks', join(SUITE, 'tasks.json'), '--agent', 'replay', '--provider', 'docker', '--workers', '2', '--out', out, ...only.flatMap((t) => ['--only', t])],
      (p) => {
        pid = p;
      },
    );
    // While it runs: every container it starts publishes on 127.0.0.1 only.
    const watch = (async () => {
      while (running) {
        for (const id of containersOf(pid)) {
          if (seen.has(id)) continue;
          try {
            seen.set(id, publishedBindings(id));
          } catch {
            // removed between ps and inspect
          }
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const r = await run;
    running = false;
    await watch;
    expect(r.code, r.text).toBe(0);
    const scores = JSON.parse(readFileSync(join(out, 'scores.json'), 'utf8')) as { by_agent: Array<{ success_rate: number; runs: number; infra_errors: number }> };
    const s = scores.by_agent[0]!;
    expect(s.infra_errors).toBe(0);
    expect(s.runs).toBe(only.length);
    expect(s.success_rate).toBe(1);
    expect(seen.size).toBeGreaterThan(0);
    for (const [id, b] of seen) {
      expect(b.length, id).toBeGreaterThan(0);
      for (const x of b) expect(x).toMatch(/^127\.0\.0\.1:\d+$/);
    }
    expect(containersOf(pid)).toEqual([]);
    // The suite was served on the Docker bridge, not on every interface.
    const gateway = await dockerBridgeGateway();
    if (gateway) expect(r.text).toContain(`serving ${SUITE} at http://${gateway}:`);
  }, 900_000);

  it('vncua eval --provider docker --pool 2: pooled containers serve one run each (nav-back among them: the pool page is not in the history), none left', async () => {
    const out = join(dir, 'pool');
    const ids = ['click-button', 'nav-back', 'type-search', 'late-content'];
    let pid = 0;
    const r = await evalCli(
      ['--tasks', join(SUITE, 'tasks.json'), '--agent', 'replay', '--provider', 'docker', '--workers', '2', '--pool', '2', '--only', ids.join(','), '--out', out],
      (p) => {
        pid = p;
      },
    );
    expect(r.code, r.text).toBe(0);
    const tasks = ids.map(
      (id) =>
        JSON.parse(readFileSync(join(out, 'replay', '1280_800', id, 'task.json'), 'utf8')) as {
          status: string;
          desktop: { container: string; pooled: boolean };
          desktop_overhead_ms: number;
        },
    );
    for (const t of tasks) {
      expect(t.status).toBe('finished');
      expect(t.desktop_overhead_ms).toEqual(expect.any(Number));
    }
    expect(new Set(tasks.map((t) => t.desktop.container)).size).toBe(ids.length);
    expect(tasks.filter((t) => t.desktop.pooled).length).toBeGreaterThanOrEqual(1);
    const scores = JSON.parse(readFileSync(join(out, 'scores.json'), 'utf8')) as { by_agent: Array<{ success_rate: number; runs: number }> };
    expect(scores.by_agent[0]).toMatchObject({ runs: ids.length, success_rate: 1 });
    expect(containersOf(pid)).toEqual([]);
  }, 900_000);

  it('a runner killed with SIGKILL: its containers stop and go (their stdin ends); a leftover with a dead owner is removed by the next run', async () => {
    const tasks = join(dir, 'slow.json');
    // A page no container can reach keeps the task waiting for its page: time enough to kill the runner.
    await writeFile(tasks, JSON.stringify([{ id: 'slow', goal: 'wait', url: 'http://10.255.255.1:9/never.html', success: { sentinel: 'x' } }]));
    let pid = 0;
    const killed = evalCli(['--tasks', tasks, '--agent', 'replay', '--provider', 'docker', '--out', join(dir, 'killed')], (p) => {
      pid = p;
    });
    await until('a container of the runner', () => containersOf(pid).length > 0);
    process.kill(pid, 'SIGKILL');
    const k = await killed;
    expect(k.signal).toBe('SIGKILL');
    await until("the killed runner's containers to be gone", () => containersOf(pid).length === 0, 60_000);
    // A container that outlived its runner anyway (here: started detached by hand, owner a dead process).
    const dead = spawnSync('true').pid!;
    const orphan = docker('run', '--detach', '--label', `${OWNER_LABEL}=${dead}.1`, 'vncua-desktop', '--size', '640x480');
    expect(docker('ps', '--all', '--filter', `id=${orphan}`, '--quiet')).not.toBe('');
    const next = await evalCli(['--tasks', join(SUITE, 'tasks.json'), '--agent', 'replay', '--provider', 'docker', '--only', 'click-button', '--out', join(dir, 'next')]);
    expect(next.code, next.text).toBe(0);
    expect(docker('ps', '--all', '--filter', `id=${orphan}`, '--quiet')).toBe('');
  }, 600_000);

  it('bad input: no image, a stale image, a container that exits at start, a bad size: coded errors, no container left', async () => {
    await expect(dockerProvider({ image: 'vncua-no-such-image' }).prepare!({ sizes: [SIZE] })).rejects.toMatchObject({ code: 'DOCKER_ERR_NO_IMAGE' });
    // An image built from other docker/ files than these (here: one file changed).
    const ctx = join(dir, 'ctx');
    await cp(join(ROOT, 'docker'), ctx, { recursive: true });
    await writeFile(join(ctx, CONTEXT_FILES[1]!), `${readFileSync(join(ctx, CONTEXT_FILES[1]!), 'utf8')}\n# changed\n`);
    const stale = await dockerProvider({ contextDir: ctx }).prepare!({ sizes: [SIZE] }).catch((e: unknown) => e);
    expect(isVncuaError(stale, 'DOCKER_ERR_NO_IMAGE')).toBe(true);
    expect((stale as Error).message).toContain('npm run setup:docker');
    const before = containersOf(process.pid).length;
    // An image whose entrypoint is not start.sh: bash refuses --size and the container exits.
    const exits = await dockerProvider({ image: 'debian:bookworm-slim', contextDir: null })
      .acquire({ size: SIZE, url: 'about:blank', timeoutMs: 60_000 })
      .catch((e: unknown) => e);
    expect(isVncuaError(exits, 'DOCKER_ERR_CONTAINER_EXITED'), String(exits)).toBe(true);
    expect((exits as Error).message).toMatch(/--size/);
    // start.sh's own error, with its code: a side below 16 pixels.
    const small = await dockerProvider()
      .acquire({ size: { width: 8, height: 8 }, url: 'about:blank', timeoutMs: 60_000 })
      .catch((e: unknown) => e);
    expect(isVncuaError(small, 'DESKTOP_ERR_BAD_SIZE'), String(small)).toBe(true);
    expect(containersOf(process.pid).length).toBe(before);
  }, 300_000);

  describe('the same desktop everywhere', () => {
    let server: StaticServer;
    let native: Awaited<ReturnType<typeof launchDesktop>> | undefined;
    let lease: LeasedDesktop | undefined;
    beforeAll(async () => {
      // One server both desktops reach: the Docker bridge's address is also a local address of the host.
      server = await startStaticServer({ root: join(SUITE, 'pages'), host: (await dockerBridgeGateway()) ?? '0.0.0.0' });
      native = await launchDesktop({ size: SIZE, url: 'about:blank', timeoutMs: 45_000 });
      // (An empty page never gets ready, PAGE_ERR_BLANK: each test navigates and waits itself.)
      lease = await dockerProvider().acquire({ size: SIZE, url: 'about:blank' });
    }, 180_000);
    afterAll(async () => {
      for (const step of [() => lease?.release(), () => native?.close(), () => server?.close()]) {
        try {
          await step?.();
        } catch {
          // keep closing the rest
        }
      }
    });

    /** The screen of a desktop showing `url`: raw RGB pixels once the page is ready and the screen quiet. */
    async function screen(vncUrl: string, cdpUrl: string, url: string): Promise<Buffer> {
      await waitForPageReady(cdpUrl, { url, navigate: true, loadTimeoutMs: 30_000 });
      const vnc = await connectVnc(vncUrl, { timeoutMs: 30_000 });
      try {
        await vnc.waitForQuiet({ quietMs: 500, timeoutMs: 20_000 });
        const shot = await vnc.screenshot({ cache: false });
        return await sharp(shot.png).removeAlpha().raw().toBuffer();
      } finally {
        await vnc.close();
      }
    }

    for (const page of ['form-signup.html', 'scroll-find.html', 'type-unicode.html', 'dropdown-custom.html']) {
      it(`${page}: the same pixels in a container and on the native desktop`, async () => {
        const url = `${server.url}${page}`;
        const a = await screen(native!.vncUrl, native!.cdpUrl, url);
        const b = await screen(lease!.vncUrl, lease!.cdpUrl, url);
        expect(a.length).toBe(SIZE.width * SIZE.height * 3);
        // Not two blank screens: the page drew text and controls in many colours.
        const colours = new Set<number>();
        for (let i = 0; i < a.length; i += 3) colours.add((a[i]! << 16) | (a[i + 1]! << 8) | a[i + 2]!);
        expect(colours.size).toBeGreaterThan(20);
        let differing = 0;
        for (let i = 0; i < a.length; i += 3) if (a[i] !== b[i] || a[i + 1] !== b[i + 1] || a[i + 2] !== b[i + 2]) differing++;
        if (differing > 0) {
          await sharp(a, { raw: { width: SIZE.width, height: SIZE.height, channels: 3 } })
            .png()
            .toFile(join(dir, `native-${page}.png`));
          await sharp(b, { raw: { width: SIZE.width, height: SIZE.height, channels: 3 } })
            .png()
            .toFile(join(dir, `docker-${page}.png`));
        }
        expect(differing, `pixels that differ (screens kept in ${dir})`).toBe(0);
      }, 180_000);
    }
  });
});
