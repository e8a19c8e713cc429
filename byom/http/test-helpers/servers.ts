/**
 * Test-only: real HTTP servers on 127.0.0.1:0 that play scripted answers and record what they
 * got: every request (method, path, headers, body, which TCP connection) and the number of
 * connections opened.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A request as the server saw it. */
export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** 1-based number of the TCP connection it came on. */
  socket: number;
}

/** What the script answers: a response, or 'hang' (never answer), or 'drop' (close the connection). */
export type Reply = { status?: number; headers?: Record<string, string>; body?: unknown } | 'hang' | 'drop';

/** A running scripted server. */
export interface ScriptedServer {
  url: string;
  requests: SeenRequest[];
  /** Connections opened so far. */
  readonly connections: number;
  close(): Promise<void>;
}

/** Start a server answering each request with `script(request, n)` (n is 1-based). Bodies that are not strings are sent as JSON. */
export async function startScriptedServer(script: (req: SeenRequest, n: number) => Reply | Promise<Reply>): Promise<ScriptedServer> {
  const requests: SeenRequest[] = [];
  const hanging: ServerResponse[] = [];
  const socketIds = new WeakMap<Socket, number>();
  let connections = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen: SeenRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        socket: socketIds.get(req.socket) ?? 0,
      };
      requests.push(seen);
      void Promise.resolve(script(seen, requests.length)).then(
        (reply) => {
          if (reply === 'hang') {
            hanging.push(res);
            return;
          }
          if (reply === 'drop') {
            req.socket.destroy();
            return;
          }
          const body = typeof reply.body === 'string' ? reply.body : reply.body === undefined ? '' : JSON.stringify(reply.body);
          res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
          res.end(body);
        },
        (e: unknown) => {
          res.writeHead(599);
          res.end(String(e));
        },
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s: Socket) => socketIds.set(s, ++connections));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const h of hanging) h.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** An OAuth2 token endpoint issuing tok-1, tok-2, … (each after `delayMs`); `fetches` counts them. */
export async function startTokenServer(options: { delayMs?: number; expiresIn?: number; status?: number } = {}): Promise<ScriptedServer & { readonly fetches: number }> {
  let fetches = 0;
  const s = await startScriptedServer(async () => {
    if (options.status) return { status: options.status, body: { error: 'invalid_client' } };
    const n = ++fetches;
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    return { body: { access_token: `tok-${n}`, token_type: 'Bearer', expires_in: options.expiresIn ?? 3600 } };
  });
  Object.defineProperty(s, 'fetches', { get: () => fetches, enumerable: true });
  return s as ScriptedServer & { readonly fetches: number };
}
