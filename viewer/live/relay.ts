/**
 * The byte-for-byte WebSocket relay between a browser's noVNC and a live endpoint's `/rfb`: every message
 * goes through unchanged (binary stays binary), in order, both ways; the browser never learns the endpoint's
 * URL or token. Messages from the browser before the endpoint's socket is open are held and sent in order.
 * A slow side pauses the other (bounded buffering); either side closing closes the other.
 */
import WebSocket, { type RawData } from 'ws';

/** Options of relay(). */
export interface RelayOptions {
  /** The subprotocols the browser offered (passed on to the endpoint). */
  protocols?: string[];
  /** Give up opening the endpoint's socket after this many ms (default 10 000). */
  timeoutMs?: number;
  /** Called once both sockets are closed, with why the relay ended (null: a clean close). */
  onClose?: (error: string | null) => void;
  /** Called once the endpoint's socket is open. */
  onOpen?: () => void;
}

/** A running relay. */
export interface Relay {
  /** Close both sockets (code 1001: the viewer is going away); resolves once both are closed (cut after `graceMs`, default 1000). */
  close(graceMs?: number): Promise<void>;
  /** Bytes relayed so far, browser → endpoint and endpoint → browser. */
  readonly bytes: { up: number; down: number };
}

/** Pause the sending side above this many bytes queued on the receiving side; resume below LOW. */
const HIGH = 8 * 1024 * 1024;
const LOW = 1024 * 1024;

/** A close code that may be sent again (1005/1006/1015 are reserved for "none received"). */
function sendable(code: number): number {
  return code === 1000 || (code >= 1001 && code <= 1014 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999) ? code : 1000;
}

/** Relay `browser` (an accepted WebSocket) to the WebSocket at `target` (the endpoint's /rfb URL with its token). */
export function relay(browser: WebSocket, target: string, opts: RelayOptions = {}): Relay {
  const upstream = new WebSocket(target, opts.protocols ?? [], { handshakeTimeout: opts.timeoutMs ?? 10_000, perMessageDeflate: false });
  const bytes = { up: 0, down: 0 };
  const held: Array<{ data: RawData; isBinary: boolean }> = [];
  let error: string | null = null;
  let closed = 0;
  let allClosed!: () => void;
  const done = new Promise<void>((r) => (allClosed = r));
  const onClosed = () => {
    if (++closed !== 2) return;
    allClosed();
    opts.onClose?.(error);
  };

  /** Forward `data` from `src` to `dst`, pausing `src` while `dst` holds too much. */
  const forward = (src: WebSocket, dst: WebSocket, data: RawData, isBinary: boolean) => {
    dst.send(data, { binary: isBinary }, () => {
      if (src.isPaused && dst.bufferedAmount < LOW) src.resume();
    });
    if (dst.bufferedAmount > HIGH && !src.isPaused) src.pause();
  };
  const size = (d: RawData) => (Array.isArray(d) ? d.reduce((n, b) => n + b.length, 0) : d instanceof ArrayBuffer ? d.byteLength : d.length);

  browser.on('message', (data, isBinary) => {
    bytes.up += size(data);
    if (upstream.readyState === WebSocket.OPEN) forward(browser, upstream, data, isBinary);
    else if (upstream.readyState === WebSocket.CONNECTING) held.push({ data, isBinary });
  });
  upstream.on('open', () => {
    for (const m of held.splice(0)) forward(browser, upstream, m.data, m.isBinary);
    opts.onOpen?.();
  });
  upstream.on('message', (data, isBinary) => {
    bytes.down += size(data);
    if (browser.readyState === WebSocket.OPEN) forward(upstream, browser, data, isBinary);
  });
  upstream.on('unexpected-response', (_req, res) => {
    error = `the live endpoint refused the connection (HTTP ${res.statusCode})`;
    res.resume();
    upstream.terminate();
  });
  upstream.on('error', (e: Error & { code?: string }) => {
    error ??= `the live endpoint does not answer (${e.code ?? e.message})`;
  });
  browser.on('error', (e: Error) => {
    error ??= `browser socket: ${e.message}`;
  });
  upstream.on('close', (code, reason) => {
    if (browser.readyState === WebSocket.OPEN || browser.readyState === WebSocket.CONNECTING) {
      // Why, for the page: the endpoint's own reason, else what went wrong reaching it.
      const why = error ? `SERVE_ERR_LIVE_UNREACHABLE: ${error}` : reason.toString();
      browser.close(error ? 1011 : sendable(code), Buffer.from(why).subarray(0, 123));
    }
    onClosed();
  });
  browser.on('close', (code, reason) => {
    if (upstream.readyState === WebSocket.OPEN) upstream.close(sendable(code), reason);
    else if (upstream.readyState === WebSocket.CONNECTING) upstream.terminate();
    onClosed();
  });
  return {
    bytes,
    async close(graceMs = 1000) {
      for (const ws of [browser, upstream]) {
        if (ws.readyState === WebSocket.OPEN) ws.close(1001, 'vncua serve is stopping');
        else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      }
      const cut = setTimeout(() => {
        browser.terminate();
        upstream.terminate();
      }, graceMs);
      await done;
      clearTimeout(cut);
    },
  };
}
