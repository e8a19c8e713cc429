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
  /** Release whatever the provider itself holds. */
  close?(): Promise<void>;
}
