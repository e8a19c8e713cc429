/**
 * An RFB round trip: "the server has read every message this client sent so far".
 *
 * RFB has no ping that every server answers, but a non-incremental FramebufferUpdateRequest
 * must be answered, and servers read client messages in order. So: request the 1x1 region
 * at the screen's bottom-right pixel, and wait until a rectangle covering that pixel arrives.
 * Input events sent before the request were read (and, on Xvnc and x11vnc, injected into X)
 * before the answer was produced. The bottom-right pixel is chosen because pages rarely
 * repaint it, so an update that was already on its way (answering the client's standing
 * incremental request) almost never covers it by chance.
 *
 * WORKAROUND (to be replaced by a `VncClient.sync()` in harness/rfb): VncClient has no public way
 * to send a FramebufferUpdateRequest or to see rectangle headers, so this module reaches
 * into its `session` and `transport` fields (TypeScript-private, present at runtime) and
 * wraps `session.receive` to watch the rectangles. If those fields are missing (the client
 * changed), `sync()` falls back to waiting FALLBACK_SYNC_MS, which paces input but proves nothing.
 *
 * Measured on this machine (loopback, 1280x800): Xvnc answers in ~0.6 ms (median); x11vnc in
 * ~43 ms (median) with stalls up to ~360 ms, since it answers from its polling loop.
 */
import { VncuaError } from '../errors.ts';
import { writeFramebufferUpdateRequest } from '../rfb/client-messages.ts';
import { ENCODINGS } from '../rfb/encodings/index.ts';
import type { RectHeader } from '../rfb/encodings/types.ts';
import type { VncClient } from '../rfb/index.ts';
import type { SessionEvent } from '../rfb/session.ts';

/** Time waited instead of a round trip when the client's internals are not reachable. */
export const FALLBACK_SYNC_MS = 30;
/** Default time a round trip may take before it fails with RFB_ERR_TIMEOUT. */
export const DEFAULT_SYNC_TIMEOUT_MS = 10_000;

interface ClientInternals {
  session: { receive(bytes: Uint8Array): SessionEvent[]; size: { width: number; height: number } };
  transport: { send(bytes: Uint8Array): void } | null;
}

interface Pending {
  x: number;
  y: number;
  resolve(): void;
  reject(e: VncuaError): void;
}

/** Options of RoundTrip.sync(). */
export interface SyncOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

/** Round trips over one VncClient. */
export class RoundTrip {
  private readonly pending = new Set<Pending>();
  private readonly internals: ClientInternals | null;
  private closedError: VncuaError | null = null;

  constructor(private readonly client: VncClient) {
    this.internals = reach(client);
    if (this.internals) {
      const session = this.internals.session;
      const receive = session.receive.bind(session);
      session.receive = (bytes: Uint8Array): SessionEvent[] => {
        const events = receive(bytes);
        if (this.pending.size > 0) for (const ev of events) if (ev.type === 'rect') this.onRect(ev.rect);
        return events;
      };
    }
    client.on('close', (error) => {
      this.closedError = new VncuaError('RFB_ERR_CLOSED', `the connection to ${client.url} closed during a round trip${error ? `: ${error.message}` : ''}`, { cause: error ?? undefined });
      for (const p of [...this.pending]) p.reject(this.closedError);
    });
  }

  /** True when sync() is a real round trip (false: the timed fallback). */
  get exact(): boolean {
    return this.internals !== null;
  }

  /** Resolve once the server has read everything sent before this call (see the file comment). */
  sync(options: SyncOptions = {}): Promise<void> {
    const { signal } = options;
    const timeoutMs = options.timeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS;
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.closedError || this.client.closed) {
      return Promise.reject(this.closedError ?? new VncuaError('RFB_ERR_CLOSED', `the connection to ${this.client.url} is closed`));
    }
    if (!this.internals || !this.internals.transport) return sleep(FALLBACK_SYNC_MS, signal);
    const { width, height } = this.internals.session.size;
    const x = Math.max(0, width - 1);
    const y = Math.max(0, height - 1);
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        this.pending.delete(p);
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const p: Pending = {
        x,
        y,
        resolve: () => (done(), resolve()),
        reject: (e) => (done(), reject(e)),
      };
      const onAbort = () => p.reject(abortReason(signal!));
      this.pending.add(p);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (Number.isFinite(timeoutMs)) {
        timer = setTimeout(
          () => p.reject(new VncuaError('RFB_ERR_TIMEOUT', `the VNC server at ${this.client.url} did not answer a FramebufferUpdateRequest within ${timeoutMs} ms`, { details: { timeoutMs } })),
          timeoutMs,
        );
      }
      try {
        this.internals!.transport!.send(writeFramebufferUpdateRequest(false, x, y, 1, 1));
      } catch (e) {
        p.reject(e instanceof VncuaError ? e : new VncuaError('RFB_ERR_CLOSED', `could not send to ${this.client.url}: ${(e as Error).message}`, { cause: e }));
      }
    });
  }

  private onRect(r: RectHeader): void {
    if (ENCODINGS.get(r.encoding)?.pseudo !== false) return;
    for (const p of [...this.pending]) {
      if (p.x >= r.x && p.x < r.x + r.width && p.y >= r.y && p.y < r.y + r.height) p.resolve();
    }
  }
}

/** The client's session and transport, or null when they are not where this module expects them. */
function reach(client: VncClient): ClientInternals | null {
  const c = client as unknown as Partial<ClientInternals>;
  const session = c.session;
  if (!session || typeof session.receive !== 'function' || typeof session.size !== 'object') return null;
  if (!('transport' in c) || (c.transport !== null && typeof c.transport?.send !== 'function')) return null;
  return { session, get transport() { return (client as unknown as ClientInternals).transport; } } as ClientInternals;
}

function abortReason(signal: AbortSignal): VncuaError {
  const r: unknown = signal.reason;
  if (r instanceof VncuaError) return r;
  return new VncuaError('AGENT_ERR_CANCELLED', 'the action was cancelled through the run\'s AbortSignal', { cause: r });
}

/** Sleep `ms`, rejecting at once with the signal's reason if it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(t);
      reject(abortReason(signal!));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
