/**
 * The `local` provider: one fresh desktop per task attempt from launchDesktop() (docker/start.sh),
 * at the task's size, opened at the task's URL. The OS allocates every port; the desktop dies with
 * this process even on SIGKILL (start.sh watches its stdin pipe).
 */
import { launchDesktop, type Desktop, type LaunchDesktopOptions } from '../../harness/desktop/index.ts';
import { isAlive } from '../../harness/desktop/procs.ts';
import { VncuaError } from '../../harness/errors.ts';
import { redactUrl } from '../../harness/redact.ts';
import { cdpAnswers, waitForPageLoad } from '../cdp-page.ts';
import type { DesktopProblem, DesktopProvider, DesktopRequest, LeasedDesktop } from './types.ts';

/** Options of the local provider. */
export interface LocalProviderOptions {
  /** Start timeout of each desktop (default 45 000 ms: 8 desktops starting at once on 2 cores are slow). */
  timeoutMs?: number;
  /** How long to wait for the task's page to load (default 20 000 ms). */
  pageLoadTimeoutMs?: number;
  /** Passed to launchDesktop (server, password, env). */
  launch?: Pick<LaunchDesktopOptions, 'server' | 'password' | 'env'>;
}

/** A desktop's problem after a run, or null: the start script still runs and CDP answers. */
export async function localDesktopProblem(d: Desktop, exited: () => boolean, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<DesktopProblem | null> {
  if (exited() || !isAlive(d.pid)) {
    return { code: 'EVAL_ERR_DESKTOP_LOST', message: `The desktop (start script pid ${d.pid}) exited during the task: a part of it (Chromium, Xvnc, the WebSocket bridge) died.` };
  }
  if (!(await cdpAnswers(d.cdpUrl, opts))) {
    return { code: 'EVAL_ERR_DESKTOP_LOST', message: `Chromium's CDP endpoint ${redactUrl(d.cdpUrl)} stopped answering during the task (Chromium crashed or hung).` };
  }
  return null;
}

/** Lease a launched desktop: health() and release() around it. */
export function leaseLocal(d: Desktop): LeasedDesktop {
  let hasExited = false;
  void d.exited.then(() => {
    hasExited = true;
  });
  return {
    vncUrl: d.vncUrl,
    cdpUrl: d.cdpUrl,
    ...(d.password !== undefined ? { password: d.password } : {}),
    width: d.width,
    height: d.height,
    ports: [d.wsPort, d.cdpPort, ...(d.rfbPort !== undefined ? [d.rfbPort] : [])],
    info: { provider: 'local', pid: d.pid, display: d.display, wsPort: d.wsPort, cdpPort: d.cdpPort, ...(d.rfbPort !== undefined ? { rfbPort: d.rfbPort } : {}) },
    health: (opts) => localDesktopProblem(d, () => hasExited, opts),
    release: () => d.close(),
  };
}

/** The local provider (see the file comment). */
export function localProvider(opts: LocalProviderOptions = {}): DesktopProvider {
  return {
    name: 'local',
    async acquire(req: DesktopRequest): Promise<LeasedDesktop> {
      const d = await launchDesktop({
        ...opts.launch,
        size: req.size,
        url: req.url,
        timeoutMs: req.timeoutMs ?? opts.timeoutMs ?? 45_000,
        ...(req.signal ? { signal: req.signal } : {}),
      });
      try {
        const loaded = await waitForPageLoad(d.cdpUrl, { timeoutMs: opts.pageLoadTimeoutMs ?? 20_000, ...(req.signal ? { signal: req.signal } : {}) });
        if (!loaded) {
          throw new VncuaError('EVAL_ERR_DESKTOP_LOST', `The task page ${req.url} did not load within the page-load timeout; is its server up?`, {
            details: { url: req.url, cdpUrl: redactUrl(d.cdpUrl) },
          });
        }
      } catch (e) {
        await d.close();
        throw e;
      }
      return leaseLocal(d);
    },
  };
}
