/**
 * The live API of `vncua serve` (paths after the token segment, when there is one):
 *
 *   GET  api/live/runs                                   every live run and stale live.json (LiveRunsMessage)
 *   GET  api/live/run?dir=DIR                            whether DIR is live, and its status (LiveRunMessage)
 *   POST api/live/control?dir=DIR  {"op","who"}          takeover / handback / status through the endpoint's /control
 *   WS   api/live/events[?dir=DIR]                       pushes LiveRunsMessage on every change, or DIR's status, steps and end
 *   WS   api/live/rfb?dir=DIR&who=NAME[&view_only=0]     the run's desktop: relayed byte for byte to the endpoint's /rfb
 *
 * Control and both sockets answer the viewer's own page only (viewer/live/origin.ts): SERVE_ERR_CROSS_ORIGIN otherwise.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { type LiveHub, validWho } from './hub.ts';
import type { LiveMessage } from './messages.ts';
import { liveRequestRefusal } from './origin.ts';

/** Drop a page's events socket that lets this much pile up unread. */
const MAX_BUFFERED = 32 * 1024 * 1024;

/** The live routes over one hub. */
export interface LiveRoutes {
  /** Answer an HTTP request under api/live/ (true when `rel` was one). */
  http(rel: string, url: URL, req: IncomingMessage, res: ServerResponse): boolean;
  /** Take an upgrade request under api/live/ (true when `rel` was one; the socket is then owned). */
  upgrade(rel: string, url: URL, req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Close every events socket. */
  close(): void;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}

function refuseUpgrade(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ code, message });
  socket.end(
    `HTTP/1.1 ${status} ${status === 403 ? 'Forbidden' : 'Bad Request'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** The live routes; `loopbackOnly`: the server has no token, so only loopback Host names are answered. */
export function liveRoutes(hub: LiveHub, opts: { loopbackOnly: boolean }): LiveRoutes {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: (offered) => offered.values().next().value ?? false });
  const sockets = new Set<WebSocket>();

  const control = async (url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const dir = url.searchParams.get('dir') ?? '';
    let text = '';
    for await (const chunk of req) {
      text += chunk;
      if (text.length > 4096) return json(res, 400, { code: 'SERVE_ERR_BAD_REQUEST', message: 'the control request is too long' });
    }
    let body: { op?: unknown; who?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      return json(res, 400, { code: 'SERVE_ERR_BAD_REQUEST', message: 'the body must be JSON {"op": "takeover" | "handback" | "status", "who": NAME}' });
    }
    const op = body.op;
    const who = typeof body.who === 'string' ? body.who : '';
    if (op !== 'takeover' && op !== 'handback' && op !== 'status') {
      return json(res, 400, { code: 'SERVE_ERR_BAD_REQUEST', message: 'op must be "takeover", "handback" or "status"' });
    }
    if (!validWho(who)) return json(res, 400, { code: 'SERVE_ERR_BAD_REQUEST', message: 'who must be a name of 1-64 letters, digits, spaces or ._@+-' });
    const a = await hub.control(dir, op, who, { signal: AbortSignal.timeout(15_000) });
    if (a.ok) return json(res, 200, a.status);
    return json(res, a.http >= 400 ? a.http : 502, { code: a.code, message: a.message, ...('holder' in a ? { holder: a.holder } : {}) });
  };

  const events = (ws: WebSocket, dir: string | null) => {
    sockets.add(ws);
    const send = (m: LiveMessage) => {
      if (ws.readyState !== WebSocket.OPEN) return;
      if (ws.bufferedAmount > MAX_BUFFERED) return void ws.terminate();
      ws.send(JSON.stringify(m));
      if (m.type === 'ended' || (m.type === 'run' && m.run === null)) ws.close(1000, m.type);
    };
    let unsubscribe: (() => void) | null = null;
    let gone = false;
    ws.on('close', () => {
      gone = true;
      sockets.delete(ws);
      unsubscribe?.();
    });
    ws.on('error', () => {});
    if (dir === null) unsubscribe = hub.subscribeList(send);
    else {
      void hub.subscribeRun(dir, send).then((u) => {
        if (gone) u();
        else unsubscribe = u;
      });
    }
  };

  return {
    http(rel, url, req, res) {
      if (!rel.startsWith('api/live/')) return false;
      const route = rel.slice('api/live/'.length);
      const fail = (e: unknown) => {
        if (!res.headersSent) json(res, 500, { code: 'SERVE_ERR_INTERNAL', message: (e as Error).message });
        else res.destroy();
      };
      if (route === 'runs' && req.method === 'GET') {
        hub.list().then((m) => json(res, 200, m), fail);
      } else if (route === 'run' && req.method === 'GET') {
        hub.run(url.searchParams.get('dir') ?? '').then((m) => json(res, 200, { type: 'run', ...m }), fail);
      } else if (route === 'control' && req.method === 'POST') {
        const refusal = liveRequestRefusal(req, opts);
        if (refusal) json(res, 403, { code: 'SERVE_ERR_CROSS_ORIGIN', message: `Refused ${refusal}.` });
        else control(url, req, res).catch(fail);
      } else {
        json(res, 404, { code: 'SERVE_ERR_BAD_REQUEST', message: `no live API ${req.method} ${rel}` });
      }
      return true;
    },

    upgrade(rel, url, req, socket, head) {
      if (rel !== 'api/live/events' && rel !== 'api/live/rfb') return false;
      const refusal = liveRequestRefusal(req, opts);
      if (refusal) {
        refuseUpgrade(socket, 403, 'SERVE_ERR_CROSS_ORIGIN', `Refused ${refusal}.`);
        return true;
      }
      const dir = url.searchParams.get('dir');
      if (rel === 'api/live/rfb') {
        const who = url.searchParams.get('who') ?? '';
        if (!dir || !validWho(who)) {
          refuseUpgrade(socket, 400, 'SERVE_ERR_BAD_REQUEST', 'api/live/rfb needs ?dir=RUN&who=NAME (1-64 letters, digits, spaces or ._@+-)');
          return true;
        }
        const viewOnly = url.searchParams.get('view_only') !== '0';
        const offered = (req.headers['sec-websocket-protocol'] ?? '')
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean);
        wss.handleUpgrade(req, socket, head, (ws) => {
          sockets.add(ws);
          ws.on('close', () => sockets.delete(ws));
          void hub.attach(ws, dir, who, viewOnly, offered);
        });
        return true;
      }
      wss.handleUpgrade(req, socket, head, (ws) => events(ws, dir));
      return true;
    },

    close() {
      for (const ws of sockets) ws.terminate();
      sockets.clear();
      wss.close();
    },
  };
}
