/**
 * A run's auth bindings (harness/secrets/browser-auth.ts): started by Agent.run() beside the navigation guard when the
 * options give `auth`, closed when the run ends. Each event goes into the next trace entry's `meta.auth`
 * ({ kind: applied | retried | rejected, binding, url (origin only), status, step, resource_type, at }). A binding that
 * fails (AUTH_ERR_TOKEN_URL, AUTH_ERR_CALLBACK) or a navigation rejected twice (AUTH_ERR_REJECTED) ends the run with
 * status error and that code; a subresource rejected twice is only recorded.
 */
import type { VncuaError } from '../errors.ts';
import type { AuthBinding } from '../secrets/auth-bindings.ts';
import { startBrowserAuth, type AuthEvent, type BrowserAuth } from '../secrets/browser-auth.ts';

/** One item of an entry's meta.auth. */
export interface AuthMeta {
  kind: AuthEvent['kind'];
  binding: string;
  url: string;
  status?: number;
  step: number;
  resource_type: string;
  at: number;
}

/** The auth side of one run (see the file comment). */
export class RunAuth {
  /** The act() call in progress (1-based), set by the run loop. */
  step = 0;
  #auth: BrowserAuth | null = null;

  constructor(
    private readonly cdpUrl: string,
    private readonly bindings: readonly AuthBinding[],
    private readonly attach: (meta: { auth: AuthMeta[] }) => void,
    /** Ends the run with `e` (status error). */
    private readonly fail: (e: VncuaError) => void,
  ) {}

  /** Attach to the browser (AUTH_ERR_START when it cannot). */
  async start(signal: AbortSignal, timeoutMs: number): Promise<void> {
    this.#auth = await startBrowserAuth({
      cdpUrl: this.cdpUrl,
      bindings: this.bindings,
      onEvent: (e) => {
        const m: AuthMeta = { kind: e.kind, binding: e.binding, url: e.url, step: this.step, resource_type: e.resourceType, at: e.at };
        if (e.status !== undefined) m.status = e.status;
        this.attach({ auth: [m] });
      },
      onError: (e, resourceType) => {
        if (e.code === 'AUTH_ERR_REJECTED' && resourceType !== 'Document') return;
        this.fail(e);
      },
      signal,
      timeoutMs,
    });
  }

  /** Stop applying bindings. Never throws. */
  async close(): Promise<void> {
    const a = this.#auth;
    this.#auth = null;
    await a?.close();
  }
}
