/**
 * The Agent's VNC connection: made lazily when the first action (or screenshot) needs it, and
 * re-made once when it was found dropped. A failed re-connection is AGENT_ERR_CONNECTION_LOST.
 *
 * "Once" is per drop: after a successful re-connection, a later drop gets its own attempt.
 * An action is never replayed: a drop in the middle of an action fails that action with
 * AGENT_ERR_CONNECTION_LOST (part of its input may have been delivered), and the next action
 * reconnects.
 *
 * Through a relay (the recording proxy, `redirect()`), a failed connection is reported as a direct
 * one to the desktop would have been: the relay's upstream error when it has one (RFB_ERR_CONNECT
 * with the cause, RFB_ERR_TIMEOUT), else the client's own error naming the desktop's URL, never the
 * relay's local port.
 */
import { VncuaError } from '../errors.ts';
import { redactUrl } from '../redact.ts';
import { connectVnc, type VncClient } from '../rfb/index.ts';
import { parseVncUrl } from '../rfb/transport.ts';
import type { Point } from './arguments.ts';
import { InputDriver } from './input.ts';

/** How long one connection attempt may take. */
export const CONNECT_TIMEOUT_MS = 10_000;

/** Errors thrown while connecting (not while acting on a live connection). */
const connectErrors = new WeakSet<object>();

/** True when `e` was thrown by a connection attempt (so it is not a drop in the middle of an action). */
export function isConnectError(e: unknown): boolean {
  return typeof e === 'object' && e !== null && connectErrors.has(e);
}

/** Options of AgentConnection. */
export interface AgentConnectionOptions {
  url: string;
  password?: string | undefined;
  timeoutMs?: number | undefined;
}

/** What the connection asks a relay it was redirected to. */
export interface Relay {
  /** Why the relay could not reach the desktop for the latest connection, as a direct connection's error; else null. */
  upstreamError?(): VncuaError | null;
}

/** A lazily made, once-re-made VNC connection with its input driver. */
export class AgentConnection {
  private driverValue: InputDriver | null = null;
  private urlOverride: string | null = null;
  private relay: Relay | null = null;
  private connecting: Promise<InputDriver> | null = null;
  /** A connection was made before (a new attempt is a re-connection). */
  private hadConnection = false;
  /** Last known pointer position, carried over to a new connection (X keeps the pointer where it was). */
  private lastPointer: Point | null = null;
  /** Number of connections made so far. */
  connections = 0;
  readonly #changeListeners = new Set<(client: VncClient | null) => void>();
  /** The client last announced to the change listeners. */
  #announced: VncClient | null = null;

  constructor(private readonly options: AgentConnectionOptions) {}

  /** Connect to `url` (a relay to the options' URL) from now on (the next attempt uses it); null goes back to the options' URL. */
  redirect(url: string | null, relay: Relay | null = null): void {
    this.urlOverride = url;
    this.relay = url === null ? null : relay;
  }

  /** The URL the next connection goes to. */
  get url(): string {
    return this.urlOverride ?? this.options.url;
  }

  /** The live driver, if connected. */
  get current(): InputDriver | null {
    return this.driverValue && !this.driverValue.client.closed ? this.driverValue : null;
  }

  /** The driver of a live connection: connect now if there is none (re-connect once if it dropped). */
  driver(signal?: AbortSignal): Promise<InputDriver> {
    const live = this.current;
    if (live) return Promise.resolve(live);
    if (this.driverValue) {
      this.rememberPointer(this.driverValue);
      this.driverValue = null;
    }
    this.connecting ??= this.connect(signal).finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  /** Calls `listener` with the new client on every connection (a re-connection too), and with null when the connection closes or drops; returns the unsubscribe function. */
  onChange(listener: (client: VncClient | null) => void): () => void {
    this.#changeListeners.add(listener);
    return () => void this.#changeListeners.delete(listener);
  }

  #announce(client: VncClient | null): void {
    if (this.#announced === client) return;
    this.#announced = client;
    for (const l of [...this.#changeListeners]) {
      try {
        l(client);
      } catch {
        // a listener's failure is its own
      }
    }
  }

  /** Close the connection (if any); the next driver() call connects afresh (not as a re-connection). */
  async close(): Promise<void> {
    const d = this.driverValue;
    this.driverValue = null;
    this.hadConnection = false;
    if (d) {
      this.rememberPointer(d);
      try {
        d.releaseAll();
      } catch {
        // closing anyway
      }
      await d.client.close();
    }
    this.#announce(null);
  }

  /** A connect error through the relay as a direct connection to the desktop would have given it (see the file comment). */
  private asDirect(e: unknown): unknown {
    const via = this.urlOverride;
    if (via === null || via === this.options.url) return e;
    const upstream = this.relay?.upstreamError?.() ?? null;
    if (upstream) return upstream;
    if (!(e instanceof VncuaError) || !e.code.startsWith('RFB_ERR_')) return e;
    // The client names URLs redacted (scheme://host:port, no token): name the desktop's the same way.
    const url = redactUrl(parseVncUrl(this.options.url).href);
    const message = `${e.message.split(redactUrl(parseVncUrl(via).href)).join(url)} (through the recording proxy)`;
    return new VncuaError(e.code, message, { cause: e, details: { ...e.details, url, via: redactUrl(via) } });
  }

  private rememberPointer(d: InputDriver): void {
    this.lastPointer = d.pointer;
  }

  private async connect(signal: AbortSignal | undefined): Promise<InputDriver> {
    const reconnecting = this.hadConnection;
    let client: VncClient;
    try {
      client = await connectVnc(this.url, { password: this.options.password, signal, timeoutMs: this.options.timeoutMs ?? CONNECT_TIMEOUT_MS });
    } catch (caught) {
      if (signal?.aborted && signal.reason instanceof VncuaError) throw signal.reason;
      const e = this.asDirect(caught);
      if (typeof e === 'object' && e !== null) connectErrors.add(e);
      if (!reconnecting) throw e;
      throw new VncuaError(
        'AGENT_ERR_CONNECTION_LOST',
        `The VNC connection to ${redactUrl(this.options.url)} dropped and could not be re-made: ${(e as Error).message}. Check that the desktop is still running.`,
        { cause: e, details: { url: redactUrl(this.options.url) } },
      );
    }
    this.hadConnection = true;
    this.connections++;
    const { width, height } = client.resolution();
    const start = this.lastPointer ?? { x: Math.floor(width / 2), y: Math.floor(height / 2) };
    const d = new InputDriver(client, { x: Math.min(start.x, width - 1), y: Math.min(start.y, height - 1) });
    this.driverValue = d;
    client.on('close', () => {
      if (this.#announced === client) this.#announce(null);
    });
    this.#announce(client);
    return d;
  }
}
