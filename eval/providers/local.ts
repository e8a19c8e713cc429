/**
 * The `local` provider: one fresh desktop per task attempt from launchDesktop() (docker/start.sh),
 * at the task's size, opened at the task's URL, handed out as soon as it runs with `ready` waiting
 * for that page (harness/cdp/page-ready.ts: PAGE_ERR_* when it never is ready). The OS allocates
 * every port; the desktop dies with this process even on SIGKILL (start.sh watches its stdin pipe).
 * start() starts one at the empty page instead, for a pool (eval/desktop-pool.ts), whose open()
 * navigates it to the task page later.
 */
import { launchDesktop, type Desktop, type LaunchDesktopOptions } from '../../harness/desktop/index.ts';
import { isAlive } from '../../harness/desktop/procs.ts';
import { waitForPageReady } from '../../harness/cdp/page-ready.ts';
import { cdpAnswers, openDesktopPage, withPageReady, withWarmOpener } from '../cdp-page.ts';
import type { DesktopProblem, DesktopProvider, DesktopRequest, LeasedDesktop } from './types.ts';
import { redactUrl } from '../../harness/redact.ts';

/** Options of the local provider. */
export interface LocalProviderOptions {
  /** Start timeout of each desktop (default 45 000 ms: 8 desktops starting at once on 2 cores are slow). */
  timeoutMs?: number;
  /** How long to wait for the task's page to load and show something (default 20 000 ms; its DOM then has 5000 ms to settle). */
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
    exited: d.exited,
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
      const loadTimeoutMs = opts.pageLoadTimeoutMs ?? 20_000;
      // open(): another page later (the runner opens a task page that needs auth bindings once they are attached).
      const lease: LeasedDesktop = { ...leaseLocal(d), open: (url, o) => openDesktopPage(d.cdpUrl, url, { loadTimeoutMs, ...o }) };
      return withPageReady(lease, (signal) => waitForPageReady(d.cdpUrl, { url: req.url, loadTimeoutMs, signal }), req.signal);
    },
    /** A desktop at the empty page (launchDesktop's about:blank), for a pool: open() shows the task page later. */
    async start(req): Promise<LeasedDesktop> {
      const d = await launchDesktop({
        ...opts.launch,
        size: req.size,
        timeoutMs: req.timeoutMs ?? opts.timeoutMs ?? 45_000,
        ...(req.signal ? { signal: req.signal } : {}),
      });
      // Its blank page (start.sh's data: page) loaded first, as the docker provider's start() waits for
      // it: a spare must not be handed a task while Chromium's first navigation is still coming.
      try {
        await waitForPageReady(d.cdpUrl, { url: 'about:blank', loadTimeoutMs: opts.pageLoadTimeoutMs ?? 20_000, signal: req.signal });
      } catch (e) {
        await d.close();
        throw e;
      }
      return withWarmOpener(leaseLocal(d), { loadTimeoutMs: opts.pageLoadTimeoutMs ?? 20_000, signal: req.signal, ...(req.standAt ? { standAt: req.standAt } : {}) });
    },
  };
}
