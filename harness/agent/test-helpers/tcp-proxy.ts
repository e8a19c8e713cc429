/**
 * Test-only: a TCP proxy on 127.0.0.1:0 in front of a VNC server, so a test can cut the
 * agent's connection from the outside (`dropAll()`) or take the server away for good (`close()`).
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
    client.pipe(upstream);
    upstream.pipe(client);
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
    dropAll,
    close: () =>
      new Promise<void>((resolve) => {
        dropAll();
        server.close(() => resolve());
      }),
  };
}
