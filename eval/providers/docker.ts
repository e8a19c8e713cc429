/**
 * The `docker` provider: one container of the docker/ image (`npm run setup:docker` builds it) per
 * task attempt, its WebSocket (6080) and CDP (9222) ports published on 127.0.0.1 at ports the host
 * OS picks (`-p 127.0.0.1::6080`), read back with one `docker port`. Both answer only under the
 * container's token, taken from the paths of start.sh's ready line.
 *
 * - The container dies with the runner: `docker run --interactive --rm` stays attached, its stdin a
 *   pipe from this process that is never written. When the runner exits, even on SIGKILL, or the CLI
 *   is killed, the container's stdin ends, start.sh stops on that EOF, and --rm removes the container
 *   (StdinOnce: the daemon closes stdin when the attached client goes). The ready line arrives on the
 *   CLI's stdout: no `docker logs` to poll or follow.
 *
 * - Task URLs on 127.0.0.1/localhost are rewritten to host.docker.internal (mapped to the host with
 *   `--add-host host.docker.internal:host-gateway`): the page server must listen where containers
 *   reach it, the bridge's gateway address (dockerBridgeGateway()), not only 127.0.0.1.
 * - Containers also carry the label `vncua.eval.owner=<pid>.<start ticks>` (the runner process, robust
 *   to pid reuse): prepare() removes the containers of runners that are gone, for whatever outlived
 *   its runner anyway (a daemon restarted meanwhile, a container started by hand with the label).
 * - prepare() refuses, with DOCKER_ERR_* codes that say what to run, when there is no CLI, no daemon,
 *   or no image built from this checkout's docker/ files (label vncua.context, scripts/setup-docker.sh).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { fileURLToPath } from 'node:url';
import { timeoutSignal } from '../../harness/cancel.ts';
import { waitForPageReady } from '../../harness/cdp/page-ready.ts';
import { procStat } from '../../harness/desktop/procs.ts';
import { type ErrorCode, ERROR_CODES, VncuaError } from '../../harness/errors.ts';
import { cdpAnswers, openDesktopPage, withPageReady } from '../cdp-page.ts';
import { withWarmOpener } from '../cdp-page.ts';
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
  /** The docker/ folder whose files the image must be built from (default: this package's); null skips the check. */
  contextDir?: string | null;
}

/** Ports start.sh uses inside the container (Dockerfile ENTRYPOINT). */
export const CONTAINER_WS_PORT = 6080;
/** CDP port inside the container. */
export const CONTAINER_CDP_PORT = 9222;
/** Label marking a container as an eval desktop, with the runner that owns it (ownerId()). */
export const OWNER_LABEL = 'vncua.eval.owner';
/** Label of the image: the hash of the docker/ files it was built from (contextHash()). */
export const CONTEXT_LABEL = 'vncua.context';
/** Host name the container reaches the host by. */
export const HOST_ALIAS = 'host.docker.internal';
/** The files the image is built from, hashed into its vncua.context label (as scripts/setup-docker.sh does). */
export const CONTEXT_FILES = ['Dockerfile', 'start.sh', 'ws-bridge.py', 'cdp-bridge.py'];

/** The docker/ folder of this package. */
export const DEFAULT_CONTEXT_DIR = fileURLToPath(new URL(import.meta.url.includes('/dist/') ? '../../../docker/' : '../../docker/', import.meta.url));

/** The image's expected vncua.context label: sha256 of the context files in order, 16 hex digits (`cat FILES | sha256sum | cut -c1-16`). */
export function contextHash(dir = DEFAULT_CONTEXT_DIR): string {
  const h = createHash('sha256');
  for (const f of CONTEXT_FILES) h.update(readFileSync(`${dir}/${f}`));
  return h.digest('hex').slice(0, 16);
}

/** This process as an owner label value: `<pid>.<start time in clock ticks>` (the pid alone may be reused). */
export function ownerId(pid = process.pid): string {
  const s = procStat(pid);
  return s ? `${pid}.${s.startTicks}` : String(pid);
}

/** True when the runner named by an owner label value still runs (same pid, same start time). */
export function ownerAlive(owner: string): boolean {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(owner);
  if (!m) return false;
  const s = procStat(Number(m[1]));
  if (!s || s.state === 'Z') return false;
  return m[2] === undefined || s.startTicks === Number(m[2]);
}

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

/**
 * Arguments of the `docker run` that starts one desktop: attached (--interactive, its stdin our pipe, so
 * the container stops when this process goes) and removed when it stops (--rm).
 */
export function dockerRunArgs(o: { image: string; name: string; width: number; height: number; url: string; owner: string }): string[] {
  return [
    'run',
    '--interactive',
    '--rm',
    '--sig-proxy=false',
    '--name',
    o.name,
    '--label',
    `${OWNER_LABEL}=${o.owner}`,
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

/**
 * The container id and host ports in `docker inspect --format '{{.Id}} {{json .NetworkSettings.Ports}}'`
 * output (`ID {"6080/tcp":[{"HostIp":"127.0.0.1","HostPort":"49153"}],...}`), by container port; an
 * IPv4 binding wins over an IPv6 one. Throws on output of another shape.
 */
export function parseInspect(stdout: string): { id: string; ports: Map<number, number> } {
  const text = stdout.trim();
  const space = text.indexOf(' ');
  const id = text.slice(0, space);
  let json: Record<string, Array<{ HostIp: string; HostPort: string }> | null>;
  try {
    json = JSON.parse(text.slice(space + 1));
  } catch {
    throw new VncuaError('DESKTOP_ERR_START_FAILED', `unexpected docker inspect output: ${JSON.stringify(text.slice(0, 200))}`);
  }
  if (!/^[0-9a-f]{12,64}$/.test(id)) throw new VncuaError('DESKTOP_ERR_START_FAILED', `no container id in docker inspect output: ${JSON.stringify(text.slice(0, 200))}`);
  const ports = new Map<number, number>();
  for (const [key, bindings] of Object.entries(json ?? {})) {
    const inner = Number.parseInt(key, 10);
    for (const b of bindings ?? []) {
      if (!ports.has(inner) || !b.HostIp.includes(':')) ports.set(inner, Number(b.HostPort));
    }
  }
  return { id, ports };
}

/** What the ready line tells the host: the paths of vncUrl and cdpUrl (each holds the desktop's token). */
export interface ReadyLog {
  ready: true;
  /** e.g. "/<token>" (vncUrl's path, to put after the host's ws://127.0.0.1:PORT). */
  vncPath: string;
  /** e.g. "/<token>/" (cdpUrl's path). */
  cdpPath: string;
}

/**
 * The ready line start.sh prints first (JSON with vncUrl and cdpUrl); undefined until it is there.
 * Throws start.sh's error line (`--json`: {"error": CODE, "message": ...}) with its own code when we
 * know it (DESKTOP_ERR_BAD_SIZE, DESKTOP_ERR_MISSING_BINARY...), else DESKTOP_ERR_START_FAILED.
 */
export function parseReadyLog(stdout: string): ReadyLog | undefined {
  for (const line of stdout.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    let j: { vncUrl?: string; cdpUrl?: string; error?: string; message?: string };
    try {
      j = JSON.parse(line);
    } catch {
      continue;
    }
    if (j.error) {
      const code = (j.error in ERROR_CODES ? j.error : 'DESKTOP_ERR_START_FAILED') as ErrorCode;
      throw new VncuaError(code, `The container's desktop did not start: ${j.error}: ${j.message ?? ''}`, { details: { error: j.error } });
    }
    if (typeof j.vncUrl === 'string' && typeof j.cdpUrl === 'string') return { ready: true, vncPath: new URL(j.vncUrl).pathname, cdpPath: new URL(j.cdpUrl).pathname };
  }
  return undefined;
}

/** The docker CLI and its environment. */
interface DockerCli {
  docker: string;
  env?: Record<string, string>;
}

/** A failed docker CLI call: its stderr, and ENOENT when the CLI is missing. */
type CliError = NodeJS.ErrnoException & { stderr?: string };

/** Run the docker CLI; resolves stdout, rejects with its stderr. */
export function dockerCli(cli: DockerCli, args: string[], signal?: AbortSignal, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const env = cli.env ? { ...process.env, ...cli.env } : process.env;
    execFile(cli.docker, args, { encoding: 'utf8', timeout: timeoutMs, env, signal, maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        const e = err as CliError;
        e.stderr = stderr;
        reject(e);
      } else resolve(stdout);
    });
  });
}

/** The first line of a failed CLI call's stderr (or its message). */
function cliMessage(e: unknown): string {
  const err = e as CliError;
  return (err.stderr?.trim() || err.message || String(e)).split('\n')[0]!;
}

/**
 * The default bridge network's gateway (where containers reach the host as host.docker.internal), or
 * undefined: its IPAM gateway when the daemon lists one, else the IPv4 address of its bridge interface
 * on this machine (docker0: daemons that list only the subnet).
 */
export async function dockerBridgeGateway(opts: { docker?: string; env?: Record<string, string>; signal?: AbortSignal } = {}): Promise<string | undefined> {
  const format = '{{range .IPAM.Config}}{{.Gateway}} {{end}}|{{index .Options "com.docker.network.bridge.name"}}';
  const out = await dockerCli({ docker: opts.docker ?? 'docker', env: opts.env }, ['network', 'inspect', 'bridge', '--format', format], opts.signal).catch(() => '');
  const [gateways = '', bridge = ''] = out.trim().split('|');
  const listed = gateways.split(/\s+/).find((a) => /^\d{1,3}(\.\d{1,3}){3}$/.test(a));
  if (listed) return listed;
  return networkInterfaces()[bridge.trim() || 'docker0']?.find((a) => a.family === 'IPv4')?.address;
}

/** Where to serve a suite's pages for containers: the bridge's gateway address, else (no bridge found, e.g. a remote daemon) every interface. */
export async function suiteHostForDocker(signal?: AbortSignal): Promise<string> {
  return (await dockerBridgeGateway({ signal })) ?? '0.0.0.0';
}

/** A container's attached `docker run`: settles once start.sh's ready line is on its stdout. */
interface AttachedRun {
  proc: ChildProcess;
  ready: Promise<ReadyLog>;
}

/**
 * Start `docker run ARGS` attached (see the file comment). `ready` resolves start.sh's ready line, or
 * rejects with start.sh's error (its code), DOCKER_ERR_CONTAINER_EXITED (the CLI ended first: the
 * container exited or `docker run` failed; the message holds the last lines of its output),
 * DESKTOP_ERR_TIMEOUT, or the abort reason.
 */
function runAttached(cli: DockerCli, args: string[], name: string, signal: AbortSignal, timeoutMs: number): AttachedRun {
  const env = cli.env ? { ...process.env, ...cli.env } : process.env;
  const proc = spawn(cli.docker, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  // Never written: its end (ours, or this process's death) stops the container.
  proc.stdin!.on('error', () => {});
  const ready = new Promise<ReadyLog>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    let settled = false;
    const done = (f: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      proc.stdout!.removeAllListeners('data').resume();
      f();
    };
    const onAbort = () =>
      done(() =>
        reject(
          signal.reason instanceof DOMException && signal.reason.name === 'TimeoutError'
            ? new VncuaError('DESKTOP_ERR_TIMEOUT', `The container ${name} was not ready within ${timeoutMs} ms.`, { details: { container: name, timeoutMs } })
            : signal.reason,
        ),
      );
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      try {
        const line = parseReadyLog(stdout);
        if (line) done(() => resolve(line));
      } catch (e) {
        done(() => reject(e));
      }
    });
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr = (stderr + d).slice(-4000);
    });
    proc.on('error', (e: NodeJS.ErrnoException) =>
      done(() =>
        reject(
          e.code === 'ENOENT'
            ? new VncuaError('DOCKER_ERR_NOT_INSTALLED', `'${cli.docker}' is not installed; run: npm run setup:docker.`, { cause: e })
            : new VncuaError('DOCKER_ERR_CONTAINER_EXITED', `docker run failed: ${e.message}`, { cause: e, details: { container: name } }),
        ),
      ),
    );
    proc.on('close', (code) =>
      done(() => {
        const tail = `${stderr}\n${stdout}`.trim().split('\n').filter(Boolean).slice(-4).join(' | ');
        reject(
          new VncuaError(
            'DOCKER_ERR_CONTAINER_EXITED',
            `The container ${name} exited (docker run: exit ${code}) before its desktop was ready${tail ? `: ${tail}` : ''}; it is removed.`,
            {
              details: { container: name, exitCode: code },
            },
          ),
        );
      }),
    );
  });
  return { proc, ready };
}

let seq = 0;

/** The docker provider (see the file comment). */
export function dockerProvider(opts: DockerProviderOptions = {}): DesktopProvider {
  const docker: DockerCli = { docker: opts.docker ?? 'docker', env: opts.env };
  const image = opts.image ?? process.env.VNCUA_DOCKER_IMAGE ?? 'vncua-desktop';
  const owner = ownerId();
  return {
    name: 'docker',
    async prepare({ signal }) {
      await checkEngine(docker, image, opts.contextDir === undefined ? DEFAULT_CONTEXT_DIR : opts.contextDir, signal);
      await reapOrphans(docker, signal).catch(() => {});
    },
    async acquire(req: DesktopRequest): Promise<LeasedDesktop> {
      const name = `vncua-eval-${process.pid}-${++seq}`;
      const timeoutMs = req.timeoutMs ?? opts.timeoutMs ?? 60_000;
      const startSignal = timeoutSignal(req.signal, timeoutMs);
      let run: AttachedRun | undefined;
      let released: Promise<void> | undefined;
      // By name (also a container whose start was cut short); then the attached CLI, which returns
      // once --rm has removed the container (a container already stopping makes `rm` fail at once).
      const release = () => (released ??= removeContainer(docker, name, run?.proc));
      try {
        run = runAttached(docker, dockerRunArgs({ image, name, width: req.size.width, height: req.size.height, url: req.url, owner }), name, startSignal, timeoutMs);
        const ready = await run.ready;
        const { id, ports } = parseInspect(await dockerCli(docker, ['inspect', '--format', '{{.Id}} {{json .NetworkSettings.Ports}}', name], startSignal));
        const wsPort = ports.get(CONTAINER_WS_PORT);
        const cdpPort = ports.get(CONTAINER_CDP_PORT);
        if (!wsPort || !cdpPort) throw new VncuaError('DESKTOP_ERR_START_FAILED', `The container ${name} has no published port for ${CONTAINER_WS_PORT} or ${CONTAINER_CDP_PORT}.`);
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
            const running = (await dockerCli(docker, ['inspect', '--format', '{{.State.Running}}', id], o?.signal).catch(() => 'false')).trim();
            if (running !== 'true') return { code: 'EVAL_ERR_DESKTOP_LOST', message: `The container ${name} stopped during the task.` };
            if (!(await cdpAnswers(cdpUrl, o))) return { code: 'EVAL_ERR_DESKTOP_LOST', message: `Chromium's CDP endpoint in the container ${name} stopped answering.` };
            return null;
          },
          release,
          // Another page later, through containerUrl() (a pool's start() replaces it with its warm opener).
          open: (url, o) => openDesktopPage(cdpUrl, containerUrl(url), { loadTimeoutMs: Math.max(20_000, timeoutMs), ...o }),
        };
        return withPageReady(lease, (signal) => waitForPageReady(cdpUrl, { url: containerUrl(req.url), loadTimeoutMs: Math.max(20_000, timeoutMs), signal }), req.signal);
      } catch (e) {
        await release();
        throw e;
      }
    },
    /**
     * For a pool (eval/desktop-pool.ts): a container at the empty page (acquire() at about:blank,
     * its page wait done, its page socket open: withWarmOpener), whose open() navigates to a task page
     * later, through containerUrl().
     */
    async start(this: DesktopProvider, req): Promise<LeasedDesktop> {
      const { standAt, ...start } = req;
      const lease = await this.acquire({ ...start, url: 'about:blank' });
      try {
        await lease.ready;
      } catch (e) {
        await lease.release();
        throw e;
      }
      return withWarmOpener(lease, { toDesktop: containerUrl, signal: req.signal, ...(standAt ? { standAt } : {}) });
    },
  };
}

/** Remove a desktop's container and wait for its attached `docker run` to return (at most 20 s, then it is killed). */
async function removeContainer(docker: DockerCli, name: string, proc: ChildProcess | undefined): Promise<void> {
  await dockerCli(docker, ['rm', '--force', name]).catch(() => {});
  if (!proc) return;
  proc.stdin?.end();
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const closed = new Promise<void>((res) => proc.once('close', () => res()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
  try {
    await closed;
  } finally {
    clearTimeout(timer);
  }
}

/** prepare()'s checks: the CLI, a daemon that answers, the image, built from `contextDir`'s files (when given). */
async function checkEngine(docker: DockerCli, image: string, contextDir: string | null, signal?: AbortSignal): Promise<void> {
  try {
    await dockerCli(docker, ['version', '--format', '{{.Server.Version}}'], signal, 15_000);
  } catch (e) {
    if ((e as CliError).code === 'ENOENT') {
      throw new VncuaError('DOCKER_ERR_NOT_INSTALLED', `--provider docker: '${docker.docker}' is not installed; run: npm run setup:docker (or use --provider local).`, {
        cause: e,
        details: { provider: 'docker', program: docker.docker },
      });
    }
    throw new VncuaError('DOCKER_ERR_DAEMON', `--provider docker: no Docker daemon answers (${cliMessage(e)}); run: npm run setup:docker (it starts dockerd).`, {
      cause: e,
      details: { provider: 'docker', program: docker.docker },
    });
  }
  let label: string;
  try {
    label = (await dockerCli(docker, ['image', 'inspect', '--format', `{{index .Config.Labels "${CONTEXT_LABEL}"}}`, image], signal)).trim();
  } catch (e) {
    throw new VncuaError('DOCKER_ERR_NO_IMAGE', `--provider docker: the image ${image} is not there; run: npm run setup:docker (builds it from docker/).`, {
      cause: e,
      details: { provider: 'docker', image },
    });
  }
  if (contextDir === null || label === '' || label === '<no value>') return;
  const want = contextHash(contextDir);
  if (label !== want) {
    throw new VncuaError(
      'DOCKER_ERR_NO_IMAGE',
      `--provider docker: the image ${image} was built from other docker/ files (${label}, this checkout's are ${want}); run: npm run setup:docker.`,
      {
        details: { provider: 'docker', image, built: label, want },
      },
    );
  }
}

/** Remove eval containers whose owning runner process is gone (killed, even with SIGKILL). */
export async function reapOrphans(docker: DockerCli, signal?: AbortSignal): Promise<string[]> {
  const out = await dockerCli(docker, ['ps', '--all', '--filter', `label=${OWNER_LABEL}`, '--format', `{{.ID}} {{.Label "${OWNER_LABEL}"}}`], signal);
  const stale = out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter(([id, owner]) => id && owner && !ownerAlive(owner))
    .map(([id]) => id!);
  if (stale.length > 0) await dockerCli(docker, ['rm', '--force', ...stale], signal);
  return stale;
}
