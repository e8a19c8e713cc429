/**
 * The recording proxy in front of real desktops (launchDesktop with Chromium): TigerVNC Xvnc, and a
 * second, LibVNCServer-based server (Xvfb + x11vnc). Our client goes through the proxy over tcp:// and
 * ws:// to each server's WebSocket (Xvnc's websockify; x11vnc's own, on its RFB port: it wants an Origin
 * header, which the proxy sends) and to the server itself over tcp:// (a test relay to its unix socket:
 * without a password neither has a TCP port); pictures equal a direct client's, clicks reach the page,
 * and the recording holds exactly what was relayed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from '../../harness/agent/test-helpers/tcp-proxy.ts';
import { launchDesktop, type Desktop } from '../../harness/desktop/index.ts';
import { servePage } from '../../harness/desktop/test-helpers.ts';
import { startRecordingProxy } from './proxy.ts';
import { CLICK_PAGE, checkSessionThroughProxy, readManifest } from './test-helpers.ts';

interface Server {
  kind: 'xvnc' | 'x11vnc';
  name: string;
  /** The server's WebSocket endpoint, given the desktop and the relay to its unix socket. */
  ws: (desktop: Desktop, tcp: TcpProxy) => string;
  /** Where the two viewers click. */
  at: [{ x: number; y: number }, { x: number; y: number }];
}

const SERVERS: Server[] = [
  {
    kind: 'xvnc',
    name: 'Xvnc',
    ws: (d) => d.vncUrl,
    at: [
      { x: 101, y: 77 },
      { x: 333, y: 222 },
    ],
  },
  // x11vnc answers its own WebSocket on its RFB socket.
  {
    kind: 'x11vnc',
    name: 'x11vnc',
    ws: (_d, tcp) => `ws://127.0.0.1:${new URL(tcp.url).port}/`,
    at: [
      { x: 150, y: 90 },
      { x: 420, y: 260 },
    ],
  },
];

describe.each(SERVERS)('through the proxy to $name', ({ kind, name, ws, at }) => {
  let desktop: Desktop;
  let tcp: TcpProxy;
  let page: { url: string; close(): Promise<void> };
  let root: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), `vncua-proxy-${kind}-`));
    page = await servePage(CLICK_PAGE);
    desktop = await launchDesktop({ size: '800x600', url: page.url, server: kind });
    tcp = await startTcpProxy(`unix://${desktop.rfbSocket}`);
  });

  afterAll(async () => {
    await tcp?.close();
    await desktop?.close();
    await page?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const upstreams = [
    [`${name}'s WebSocket (ws://)`, () => ws(desktop, tcp)],
    [`${name} (tcp://)`, () => tcp.url],
  ] as const;
  for (const [upstreamName, upstream] of upstreams) {
    it(`tcp:// and ws:// viewers to ${upstreamName}: connection 0 and connection 1, both recorded exactly`, async () => {
      const dir = join(root, upstreamName.replace(/\W+/g, '-'));
      const proxy = await startRecordingProxy({ upstream: upstream(), dir });
      try {
        await checkSessionThroughProxy({ viewerUrl: proxy.url, upstream: upstream(), dir, index: 0, cdpUrl: desktop.cdpUrl, at: at[0] });
        await checkSessionThroughProxy({ viewerUrl: proxy.wsUrl, upstream: upstream(), dir, index: 1, cdpUrl: desktop.cdpUrl, at: at[1] });
        expect(proxy.connections).toBe(2);
        expect(proxy.lastError).toBeNull();
        const connections = readManifest(dir).connections;
        expect(connections.map((c) => c.client_transport)).toEqual(['tcp', 'ws']);
        expect(connections.map((c) => c.close_reason)).toEqual(['client closed', 'client closed']);
      } finally {
        await proxy.close();
      }
    });
  }
});
