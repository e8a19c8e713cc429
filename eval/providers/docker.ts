/**
 * The `docker` provider: one container of the docker/ image (`docker build -t vncua-desktop docker/`)
 * per task attempt, its WebSocket (6080) and CDP (9222) ports published on 127.0.0.1 at ports the
 * host OS picks (`-p 127.0.0.1::6080`), read back with `docker port`. Both answer only under the
 * container's token, taken from the paths of the ready line's vncUrl and cdpUrl (`docker logs`).
 *
 * - Task URLs on 127.0.0.1/localhost are rewritten to host.docker.internal (mapped to the host with
 *   `--add-host host.docker.internal:host-gateway`): the page server must then listen on an address
 *   the container can reach (not only 127.0.0.1).
 * - Containers carry the label `vncua.eval.owner=<pid>`: prepare() removes the containers of runners
 *   that are gone (a SIGKILLed runner cannot stop its own; containers do not die with their parent).
 */
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitForPageReady } from '../../harness/cdp/page-ready.ts';
import { isAlive } from '../../harness/desktop/procs.ts';
import { VncuaError } from '../../harness/errors.ts';
import { cdpAnswers, withPageReady } from '../cdp-page.ts';
import { warmOpener } from '../cdp-page.ts';
import type { DesktopProblem, DesktopProvider, DesktopRequest, LeasedDesktop } from './types.ts';

/** Options of the docker provider. */
export interface DockerProviderOptions {
  /** Image name (default `vncua-desktop`, or $VNCUA_DOCKER_IMAGE). */
  image?: string;
  /** The docker CLI (default `docker`). */
  docker?: string;
  /** Start timeout of each container (default 60 000 ms). */
  timeoutMs?: number;
  /** Extra environment for the docker CLI (e.g. DOCKER_HOST). */
  env?: Record<string, string>;
}

/** Ports start.sh uses inside the container (Dockerfile ENTRYPOINT). */
export const CONTAINER_WS_PORT = 6080;
/** CDP port inside the container. */
export const CONTAINER_CDP_PORT = 9222;
/** Label marking a container as an eval desktop, with the pid of the runner that owns it. */
export const OWNER_LABEL = 'vncua.eval.owner';
/** Host name the container reaches the host by. */
export const HOST_ALIAS = 'host.docker.internal';

/** A task URL as the container must see it: 127.0.0.1 / localhost become host.docker.internal. */
export function containerUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  if (['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) {
    u.hostname = HOST_ALIAS;
    return u.href;
  }
  return url;
}

/** Arguments of the `docker run` that starts one desktop. */
export function dockerRunArgs(o: { image: string; name: string; width: number; height: number; url: string; ownerPid: number }): string[] {
  return [
    'run',
    '--detach',
    '--rm',
    '--name',
    o.name,
    '--label',
    `${OWNER_LABEL}=${o.ownerPid}`,
    '--add-host',
    `${HOST_ALIAS}:host-gateway`,
    '--shm-size',
    '512m',
    '--publish',
    `127.0.0.1::${CONTAINER_WS_PORT}`,
    '--publish',
    `127.0.0.1::${CONTAINER_CDP_PORT}`,
    o.image,
    '--size',
    `${o.width}x${o.height}`,
    '--url',
    containerUrl(o.url),
  ];
}

/** The host port in `docker port` output (`127.0.0.1:49153`, maybe followed by an IPv6 line); throws when absent. */
export function parseDockerPort(stdout: string): number {
  for (const line of stdout.split('\n')) {
    const m = /^(?:\d{1,3}(?:\.\d{1,3}){3}|0\.0\.0\.0):(\d{1,5})\s*$/.exec(line.trim());
    if (m) return Number(m[1]);
  }
  for (const line of stdout.split('\n')) {
    const m = /:(\d{1,5})\s*$/.exec(line.trim());
    if (m) return Number(m[1]);
  }
  throw new Error(`no host port in "docker port" output: ${JSON.stringify(stdout.slice(0, 200))}`);
}

/** What the ready line tells the host: the paths of vncUrl and cdpUrl (each holds the desktop's token). */
export interface ReadyLog {
  ready: true;
  /** e.g. "/<token>" (vncUrl's path, to put after the host's ws://127.0.0.1:PORT). */
  vncPath: string;
  /** e.g. "/<token>/" (cdpUrl's path). */
  cdpPath: string;
}

/** The ready line start.sh prints first (JSON with vncUrl and cdpUrl); undefined until it is there; throws on its error line. */
export function parseReadyLog(stdout: string): ReadyLog | undefined {
  const line = stdout.split('\n').find((l) => l.trim().startsWith('{'));
  if (!line) return undefined;
  const j = JSON.parse(line) as { vncUrl?: string; cdpUrl?: string; error?: string; message?: string };
  if (j.error) throw new VncuaError('DESKTOP_ERR_START_FAILED', `The container's desktop did not start: ${j.error}: ${j.message ?? ''}`, { details: { error: j.error } });
  if (typeof j.vncUrl !== 'string' || typeof j.cdpUrl !== 'string') return undefined;
  return { ready: true, vncPath: new URL(j.vncUrl).pathname, cdpPath: new URL(j.cdpUrl).pathname };
}

/** The docker CLI and its environment. */
interface DockerCli {
  docker: string;
  env?: Record<string, string>;
}

/** Run the docker CLI; resolves stdout, rejects with its stderr. */
function run(cli: DockerCli, args: string[], signal?: AbortSignal, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const env = cli.env ? { ...process.env, ...cli.env } : process.env;
    execFile(cli.docker, args, { encoding: 'utf8', timeout: timeoutMs, env, signal, maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        const e = err as NodeJS.ErrnoException & { stderr?: string };
        e.stderr = stderr;
        reject(e);
      } else resolve(stdout);
    });
  });
}

let seq = 0;

/** The docker provider (see the file comment). */
export function dockerProvider(opts: DockerProviderOptions = {}): DesktopProvider {
  const docker: DockerCli = { docker: opts.docker ?? 'docker', env: opts.env };
  const image = opts.image ?? process.env.VNCUA_DOCKER_IMAGE ?? 'vncua-desktop';
  return {
    name: 'docker',
    async prepare({ signal }) {
      try {
        await run(docker, ['version', '--format', '{{.Server.Version}}'], signal, 15_000);
      } catch (e) {
        const err = e as NodeJS.ErrnoException & { stderr?: string };
        if (err.code === 'ENOENT') {
          throw new VncuaError('EVAL_ERR_PROVIDER_UNAVAILABLE', `--provider docker: '${docker.docker}' is not installed (install Docker, or use --provider local).`, {
            cause: e,
            details: { provider: 'docker', program: docker.docker },
          });
        }
        throw new VncuaError('EVAL_ERR_PROVIDER_UNAVAILABLE', `--provider docker: the Docker daemon is not reachable: ${(err.stderr || err.message).trim()}`, {
          cause: e,
          details: { provider: 'docker', program: docker.docker },
        });
      }
      try {
        await run(docker, ['image', 'inspect', '--format', '{{.Id}}', image], signal);
      } catch (e) {
        throw new VncuaError('EVAL_ERR_PROVIDER_UNAVAILABLE', `--provider docker: the image ${image} is not there; build it with: docker build -t ${image} docker/`, {
          cause: e,
          details: { provider: 'docker', image },
        });
      }
      await reapOrphans(docker, signal).catch(() => {});
    },
    async acquire(req: DesktopRequest): Promise<LeasedDesktop> {
      const name = `vncua-eval-${process.pid}-${++seq}`;
      const timeoutMs = req.timeoutMs ?? opts.timeoutMs ?? 60_000;
      const deadline = Date.now() + timeoutMs;
      const id = (await run(docker, dockerRunArgs({ image, name, width: req.size.width, height: req.size.height, url: req.url, ownerPid: process.pid }), req.signal)).trim();
      let released: Promise<void> | undefined;
      const release = () =>
        (released ??= run(docker, ['rm', '--force', id]).then(
          () => undefined,
          () => undefined,
        ));
      try {
        let ready: ReadyLog | undefined;
        for (;;) {
          const logs = await run(docker, ['logs', id], req.signal).catch(() => '');
          ready = parseReadyLog(logs);
          if (ready) break;
          const running = (await run(docker, ['inspect', '--format', '{{.State.Running}}', id], req.signal).catch(() => 'false')).trim();
          if (running !== 'true') throw new VncuaError('DESKTOP_ERR_START_FAILED', `The container ${name} stopped before its desktop was ready.`, { details: { container: id } });
          if (Date.now() > deadline)
            throw new VncuaError('DESKTOP_ERR_TIMEOUT', `The container ${name} was not ready within ${timeoutMs} ms.`, { details: { container: id, timeoutMs } });
          await sleep(200, undefined, req.signal ? { signal: req.signal } : {});
        }
        const wsPort = parseDockerPort(await run(docker, ['port', id, `${CONTAINER_WS_PORT}/tcp`], req.signal));
        const cdpPort = parseDockerPort(await run(docker, ['port', id, `${CONTAINER_CDP_PORT}/tcp`], req.signal));
        // The container's endpoints answer only under its token (the ready line's URL paths).
        const cdpUrl = `http://127.0.0.1:${cdpPort}${ready.cdpPath}`;
        const lease: LeasedDesktop = {
          vncUrl: `ws://127.0.0.1:${wsPort}${ready.vncPath}`,
          cdpUrl,
          width: req.size.width,
          height: req.size.height,
          ports: [wsPort, cdpPort],
          info: { provider: 'docker', container: id, name, wsPort, cdpPort },
          async health(o): Promise<DesktopProblem | null> {
            const running = (await run(docker, ['inspect', '--format', '{{.State.Running}}', id], o?.signal).catch(() => 'false')).trim();
            if (running !== 'true') return { code: 'EVAL_ERR_DESKTOP_LOST', message: `The container ${name} stopped during the task.` };
            if (!(await cdpAnswers(cdpUrl, o))) return { code: 'EVAL_ERR_DESKTOP_LOST', message: `Chromium's CDP endpoint in the container ${name} stopped answering.` };
            return null;
          },
          release,
        };
        return withPageReady(
          lease,
          (signal) => waitForPageReady(cdpUrl, { url: containerUrl(req.url), loadTimeoutMs: Math.max(20_000, deadline - Date.now()), signal }),
          req.signal,
        );
      } catch (e) {
        await release();
        throw e;
      }
    },
    /**
     * For a pool (eval/desktop-pool.ts): a container at the empty page (acquire() at about:blank,
     * its page wait done, its page socket open: warmOpener), whose open() navigates to a task page
     * later, through containerUrl().
     */
    async start(this: DesktopProvider, req): Promise<LeasedDesktop> {
      const lease = await this.acquire({ ...req, url: 'about:blank' });
      try {
        await lease.ready;
      } catch (e) {
        await lease.release();
        throw e;
      }
      const { ready: _ready, ...spare } = lease;
      let page: Awaited<ReturnType<typeof warmOpener>>;
      try {
        page = await warmOpener(lease.cdpUrl, { toDesktop: containerUrl, ...(req.signal ? { signal: req.signal } : {}) });
      } catch (e) {
        await lease.release();
        throw e;
      }
      return {
        ...spare,
        open: page.open,
        release: () => {
          page.close();
          return lease.release();
        },
      };
    },
  };
}

/** Remove eval containers whose owning runner process is gone. */
async function reapOrphans(docker: DockerCli, signal?: AbortSignal): Promise<void> {
  const out = await run(docker, ['ps', '--all', '--filter', `label=${OWNER_LABEL}`, '--format', `{{.ID}} {{.Label "${OWNER_LABEL}"}}`], signal);
  const stale = out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter(([id, pid]) => id && pid && /^\d+$/.test(pid) && Number(pid) !== process.pid && !isAlive(Number(pid)))
    .map(([id]) => id!);
  if (stale.length > 0) await run(docker, ['rm', '--force', ...stale], signal);
}
