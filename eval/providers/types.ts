/**
 * Desktop providers: where a task's desktop comes from. `local` starts one with launchDesktop(),
 * `docker` runs the docker/ image, `remote` hands out desktops someone else runs. The runner asks
 * for one desktop per task attempt and releases it in `finally`.
 */
import type { ScreenSize } from '../../harness/desktop/size.ts';

/** What the runner asks a provider for. */
export interface DesktopRequest {
  /** Screen size. */
  size: ScreenSize;
  /** The task's page (absolute URL): the desktop is opening it when acquire() resolves; LeasedDesktop.ready says when it is ready. */
  url: string;
  signal?: AbortSignal;
  /** Give up starting after this many ms (the provider's default otherwise). */
  timeoutMs?: number;
}

/** What DesktopProvider.start() is asked for. */
export interface StartRequest extends Omit<DesktopRequest, 'url'> {
  /**
   * A page on the tasks' own origin to wait at instead of the empty page (e.g. the suite server's
   * SPARE_PAGE_PATH): the task page then opens in the renderer process already up for that site.
   */
  standAt?: string;
}

/** Why a desktop is not usable (any more). */
export interface DesktopProblem {
  code: string;
  message: string;
}

/** One desktop lent to one task attempt. */
export interface LeasedDesktop {
  vncUrl: string;
  cdpUrl: string;
  /** The VNC password, when the desktop needs VNC Authentication (passed to the agent, never written anywhere). */
  password?: string;
  width: number;
  height: number;
  /** Host ports this desktop holds (VNC, WebSocket, CDP), for collision checks. */
  ports: number[];
  /** Provider details for task.json (pid, container id, endpoint index...): no secrets, URLs redacted. */
  info: Record<string, unknown>;
  /** After a run: null when the desktop still works, else what is wrong (its process died, CDP does not answer). */
  health(opts?: { signal?: AbortSignal; timeoutMs?: number }): Promise<DesktopProblem | null>;
  /** Tear the desktop down (or give it back). Idempotent; never throws. */
  release(): Promise<void>;
  /**
   * Settles once the task page is ready (harness/cdp/page-ready.ts: loaded, showing something, DOM
   * settled), or rejects with PAGE_ERR_* naming the URL and the cause (an infra error). The runner
   * passes it to agent.run({ ready }), so the agent connects while the page loads. Never an unhandled
   * rejection; release() stops the wait. Absent: the desktop is ready when acquire() resolves.
   */
  ready?: Promise<unknown>;
  /**
   * Open `url` on this desktop: navigate its one page there, clear the history (Back does not reach the
   * page it showed before), and wait until the page is ready, the same wait and PAGE_ERR_* as `ready`.
   * Present on desktops from DesktopProvider.start() (a pool opens the task page with it).
   */
  open?(url: string, opts?: { signal?: AbortSignal; loadTimeoutMs?: number }): Promise<unknown>;
  /** Settles when the desktop went away by itself (its process exited), when the provider can tell; a pool drops such a spare at once. */
  exited?: Promise<unknown>;
  /** True when the desktop was started ahead of need by a pool (eval/desktop-pool.ts). */
  pooled?: boolean;
}

/** A source of desktops. */
export interface DesktopProvider {
  /** 'local', 'docker', 'remote', or a custom name. */
  readonly name: string;
  /** Most desktops it can lend at once (the runner uses no more workers than this); unlimited when absent. */
  readonly capacity?: number;
  /** Checked once before the suite: throws EVAL_ERR_PROVIDER_UNAVAILABLE when it cannot work here. */
  prepare?(opts: { sizes: ScreenSize[]; signal?: AbortSignal }): Promise<void>;
  /** One desktop at `size`, showing `url`. A rejection (other than cancellation) is an infra failure. */
  acquire(req: DesktopRequest): Promise<LeasedDesktop>;
  /**
   * One desktop at `size` showing a neutral empty page (launchDesktop's about:blank), ready for
   * LeasedDesktop.open(): what a pool starts ahead of need. Absent: the provider cannot be pooled.
   */
  start?(req: StartRequest): Promise<LeasedDesktop>;
  /**
   * The sizes of the desktops the runner will acquire next, in order: the acquire() that follows
   * this call, then its queue of runs no worker has taken yet. A pool keeps spares for them. Called
   * before every acquire().
   */
  plan?(upcoming: readonly ScreenSize[]): void;
  /** Release whatever the provider itself holds. */
  close?(): Promise<void>;
}
