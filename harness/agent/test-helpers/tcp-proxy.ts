/**
 * Test-only: a TCP proxy on 127.0.0.1:0 in front of a VNC server, so a test can cut the
 * agent's connection from the outside (`dropAll()`), take the server away for good (`close()`),
 * or hold back what the server sends for a while (`delayServerAfterPress()`, as a busy machine does).
 * Its target may be a desktop's RFB unix socket (`unix://` + Desktop.rfbSocket): a desktop has no
 * plain TCP port of its own without a password, and peers such as gvnccapture dial TCP.
 */
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

/** A running proxy. */
export interface TcpProxy {
  /** tcp://127.0.0.1:PORT of the proxy. */
  url: string;
  /** Number of client connections accepted so far. */
  readonly accepted: number;
  /**
   * From the client's next left-button press on (a chunk holding the PointerEvent bytes 5, 1), for `forMs`,
   * deliver what the server sends `delayMs` late (in order): round trips stretch as on a busy machine.
   */
  delayServerAfterPress(delayMs: number, forMs: number): void;
  /** Destroy every open connection (both sides); new connections are still accepted. */
  dropAll(): void;
  /** Stop listening and destroy every connection. */
  close(): Promise<void>;
}

/** Start a proxy forwarding to `target` (tcp://host:port, or unix:///path/of/a/socket). */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const t = new URL(target);
  const dial = (): Socket => (t.protocol === 'unix:' ? connect({ path: decodeURIComponent(t.pathname) }) : connect({ host: t.hostname, port: Number(t.port) }));
  const sockets = new Set<Socket>();
  let accepted = 0;
  let delayMs = 0;
  let delayUntil = 0;
  let armed: { delayMs: number; forMs: number } | null = null;
  const server: Server = createServer((client) => {
    accepted++;
    const upstream = dial();
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      if (armed !== null) {
        for (let i = 0; i + 1 < chunk.length; i++) {
          if (chunk[i] === 5 && chunk[i + 1] === 1) {
            delayMs = armed.delayMs;
            delayUntil = Date.now() + armed.forMs;
            armed = null;
            break;
          }
        }
      }
      upstream.write(chunk);
    });
    let lastDue = 0;
    upstream.on('data', (chunk: Buffer) => {
      const now = Date.now();
      const due = Math.max(now < delayUntil ? now + delayMs : now, lastDue);
      lastDue = due;
      if (due <= now) client.write(chunk);
      else setTimeout(() => client.writable && client.write(chunk), due - now);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const dropAll = () => {
    for (const s of [...sockets]) s.destroy();
  };
  return {
    url: `tcp://127.0.0.1:${port}`,
    get accepted() {
      return accepted;
    },
    delayServerAfterPress(ms, forMs) {
      armed = { delayMs: ms, forMs };
    },
    dropAll,
    close: () =>
      new Promise<void>((resolve) => {
        dropAll();
        server.close(() => resolve());
      }),
  };
}
