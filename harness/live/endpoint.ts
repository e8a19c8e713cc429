/**
 * A running agent's live endpoint (issue 15, points 4 and 5; protocol in harness/live/README.md):
 * an HTTP + WebSocket server on 127.0.0.1 (an OS-chosen port) that shows the agent's own decoded
 * framebuffer to any number of RFB watchers (noVNC through `vncua serve`'s relay, or any RFB client)
 * without a new connection to the VNC server, streams the run's status, and hands mouse and keyboard
 * to a person on request. It announces itself in `<dir>/live.json` (mode 0600, holding the token).
 *
 *   GET  /rfb?token=T&who=NAME[&view_only=1]   WebSocket: an RFB 3.8 server (security None)
 *   GET  /events?token=T                       WebSocket: JSON status messages
 *   POST /control?token=T                      {"op":"takeover"|"handback"|"status","who":NAME}
 *
 * Every request needs the token (else 403 LIVE_ERR_TOKEN). Nothing here writes to the run's
 * directory but live.json, removed by close().
 */
import { randomBytes } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join } from 'node:path';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { type MapError, race } from '../cancel.ts';
import { VncuaError, isVncuaError } from '../errors.ts';
import { removeFile, writeFileAtomic } from '../trace/atomic.ts';
import type { LiveAnnouncement, LiveEndpoint, LiveEndpointOptions } from './control.ts';
import { handleControl } from './control-route.ts';
import { StatusStreams } from './events.ts';
import { FramebufferFeed } from './feed.ts';
import { checkWho, errorBody, refuseUpgrade, sameToken, sendJson } from './http.ts';
import { UpdateCache } from './rfb-server/update-cache.ts';
import { UpdatePacer } from './pacer.ts';
import { RfbWatcher, WATCHER_CLOSE } from './watcher.ts';

/** The announcement's file name in the run's directory. */
export const LIVE_JSON = 'live.json';
/** Default timeout of startLiveEndpoint(), ms. */
export const DEFAULT_START_TIMEOUT_MS = 10_000;
/** Default wait of a watcher's ServerInit for the run's first framebuffer, ms. */
export const DEFAULT_HOLD_MS = 60_000;
/** Longest WebSocket message a watcher may send (RFB client messages are small; a ClientCutText is bounded anyway). */
const MAX_WS_PAYLOAD = 2 * 1024 * 1024;
/** How long close() lets sockets finish their closing handshake before cutting them. */
const CLOSE_GRACE_MS = 1000;

/** startLiveEndpoint()'s options: LiveEndpointOptions plus tuning. */
export interface StartLiveEndpointOptions extends LiveEndpointOptions {
  /** How long a watcher's ServerInit waits for the run's first framebuffer before closing it with LIVE_ERR_NO_FRAMEBUFFER (default 60 s). */
  holdMs?: number;
}

/** A started endpoint, with what tests and benches look at. */
export interface RunningLiveEndpoint extends LiveEndpoint {
  /** The port on 127.0.0.1. */
  readonly port: number;
  /** Watchers connected now. */
  readonly watchers: number;
  /** FramebufferUpdates handed to watchers' sockets so far, their bytes, how many were built (the rest were shared), and the agent-process time the pacer's frames took (ms). */
  stats(): { updates: number; bytes: number; built: number; busyMs: number };
}

/** The cancellation errors of the start. */
const startCancel: MapError = (c) =>
  c.kind === 'timeout'
    ? new VncuaError('LIVE_ERR_TIMEOUT', `the live endpoint did not start within ${c.timeoutMs} ms`, { details: { timeoutMs: c.timeoutMs } })
    : new VncuaError('LIVE_ERR_ABORTED', "the live endpoint's start was aborted through its AbortSignal", { cause: c.reason });

/**
 * Start serving `options.control` on 127.0.0.1 and write `<dir>/live.json`. Rejects with LIVE_ERR_LISTEN,
 * LIVE_ERR_TIMEOUT, LIVE_ERR_ABORTED or TRACE_ERR_WRITE (live.json), leaving nothing listening and no live.json.
 * `signal` and `timeoutMs` bound the start only; close() ends the endpoint.
 */
export async function startLiveEndpoint(options: StartLiveEndpointOptions): Promise<RunningLiveEndpoint> {
  const { dir, control } = options;
  const token = randomBytes(16).toString('hex');
  const name = options.title ?? `vncua ${basename(dir)}`;
  const holdMs = options.holdMs ?? DEFAULT_HOLD_MS;
  const liveJson = join(dir, LIVE_JSON);

  const feed = new FramebufferFeed(control);
  const streams = new StatusStreams(control);
  const watchers = new Set<RfbWatcher>();
  const sockets = new Set<WebSocket>();
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: MAX_WS_PAYLOAD,
    // Accept whatever subprotocol is offered first (noVNC offers "binary"); none is fine too.
    handleProtocols: (protocols) => protocols.values().next().value ?? false,
  });
  let closing = false;
  const cache = new UpdateCache();
  const pacer = new UpdatePacer();
  // Frames are spaced out while the agent acts; a person in control (or a paused run) gets every change at once.
  const pace = (state: string) => {
    pacer.running = state === 'running';
  };
  pace(control.status().state);
  const unpace = control.onStatus((s) => pace(s.state));
  const sent = { updates: 0, bytes: 0 };
  const onUpdate = (bytes: number) => {
    sent.updates++;
    sent.bytes += bytes;
  };

  const server: Server = createServer((req, res) => onRequest(req, res));
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => onUpgrade(req, socket, head));
  server.on('clientError', (_e, socket) => socket.destroy());

  /** The request's path and query, or an answer already sent (a wrong token). */
  const route = (req: IncomingMessage, refuse: (status: number, body: unknown) => void): { path: string; q: URLSearchParams } | null => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (!sameToken(url.searchParams.get('token'), token)) {
      refuse(403, errorBody(new VncuaError('LIVE_ERR_TOKEN', "this live endpoint needs its token (?token=...): take it from the run's live.json")));
      return null;
    }
    return { path: url.pathname, q: url.searchParams };
  };

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const r = route(req, (status, body) => sendJson(res, status, body));
    if (!r) return;
    if (r.path === '/control') {
      void handleControl(req, res, control);
      return;
    }
    if (r.path === '/rfb' || r.path === '/events') {
      sendJson(res, 426, errorBody(new VncuaError('LIVE_ERR_BAD_REQUEST', `${r.path} is a WebSocket: open it with ws://127.0.0.1:PORT${r.path}?token=...`)));
      return;
    }
    sendJson(res, 404, errorBody(new VncuaError('LIVE_ERR_BAD_REQUEST', `no ${r.path} here: the live endpoint serves /rfb, /events and /control`)));
  }

  function onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => {});
    const r = route(req, (status, body) => refuseUpgrade(socket, status, body));
    if (!r) return;
    if (closing) {
      refuseUpgrade(socket, 503, errorBody(new VncuaError('LIVE_ERR_CLOSED', 'the live endpoint is closing: the run ended')));
      return;
    }
    let accept: (ws: WebSocket) => void;
    if (r.path === '/rfb') {
      let who: string;
      try {
        who = checkWho(r.q.get('who'));
      } catch (e) {
        refuseUpgrade(socket, 400, errorBody(e as VncuaError));
        return;
      }
      const viewOnly = ['1', 'true'].includes(r.q.get('view_only') ?? '');
      accept = (ws) => {
        const w = new RfbWatcher(ws, { who, viewOnly, name, control, feed, holdMs, onUpdate, cache, pacer, onClose: () => watchers.delete(w) });
        watchers.add(w);
      };
    } else if (r.path === '/events') {
      accept = (ws) => streams.add(ws);
    } else {
      refuseUpgrade(socket, 404, errorBody(new VncuaError('LIVE_ERR_BAD_REQUEST', `no WebSocket at ${r.path}: the live endpoint has /rfb and /events`)));
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.once('close', () => sockets.delete(ws));
      accept(ws);
    });
  }

  let closed: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      closing = true;
      const reason = new VncuaError('LIVE_ERR_CLOSED', 'the live endpoint closed: the run ended');
      for (const step of [
        () => feed.close(),
        () => pacer.close(),
        () => unpace(),
        () => streams.close(),
        () => {
          for (const w of [...watchers]) w.close(WATCHER_CLOSE.GOING_AWAY, reason);
        },
        () => {
          for (const ws of sockets) if (ws.readyState === WebSocket.OPEN) ws.close(1001, 'LIVE_ERR_CLOSED: the run ended');
        },
      ]) {
        try {
          step();
        } catch {
          // each step on its own: a failure in one never keeps the others from running
        }
      }
      await waitClosed(sockets, CLOSE_GRACE_MS).catch(() => {});
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }).catch(() => {});
      await removeFile(liveJson).catch(() => {});
    })();
    return closed;
  };

  const start = async (): Promise<number> => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    }).catch((e: unknown) => {
      throw new VncuaError('LIVE_ERR_LISTEN', `the live endpoint cannot listen on 127.0.0.1: ${(e as Error).message}`, {
        cause: e,
        details: { cause: (e as NodeJS.ErrnoException).code },
      });
    });
    const port = (server.address() as AddressInfo).port;
    const announcement: LiveAnnouncement = { version: 1, url: `http://127.0.0.1:${port}`, token, pid: process.pid, started_at: Date.now() };
    await writeFileAtomic(liveJson, `${JSON.stringify(announcement, null, 2)}\n`, { mode: 0o600 });
    return port;
  };

  let port: number;
  const starting = start();
  try {
    port = await race(starting, { signal: options.signal, timeoutMs: options.timeoutMs ?? DEFAULT_START_TIMEOUT_MS, mapError: startCancel });
  } catch (e) {
    // The start may still be writing live.json: let it settle, then undo everything.
    await starting.catch(() => {});
    await close();
    throw isVncuaError(e) ? e : new VncuaError('LIVE_ERR_LISTEN', `the live endpoint did not start: ${(e as Error)?.message ?? String(e)}`, { cause: e });
  }
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    token,
    port,
    get watchers() {
      return watchers.size;
    },
    stats: () => ({ ...sent, built: cache.misses, busyMs: pacer.busyMs }),
    close,
  };
}

/** Resolve once every socket in `sockets` has closed, cutting those still open after `graceMs`. */
async function waitClosed(sockets: Set<WebSocket>, graceMs: number): Promise<void> {
  if (sockets.size === 0) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      for (const ws of sockets) ws.terminate();
      resolve();
    }, graceMs);
    let left = sockets.size;
    for (const ws of sockets) {
      ws.once('close', () => {
        if (--left === 0) {
          clearTimeout(timer);
          resolve();
        }
      });
    }
  });
}
