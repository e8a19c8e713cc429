/**
 * The recording proxy in front of a second, LibVNCServer-based server (launchDesktop with
 * server 'x11vnc': Xvfb + x11vnc + Chromium), through x11vnc's own WebSocket endpoint (on its RFB
 * port; it wants an Origin header, which the proxy sends) and over plain tcp://.
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

let desktop: Desktop;
let tcp: TcpProxy;
let page: { url: string; close(): Promise<void> };
let root: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'vncua-proxy-x11vnc-'));
  page = await servePage(CLICK_PAGE);
  desktop = await launchDesktop({ size: '800x600', url: page.url, server: 'x11vnc' });
  tcp = await startTcpProxy(`unix://${desktop.rfbSocket}`);
});

afterAll(async () => {
  await tcp?.close();
  await desktop?.close();
  await page?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('through the proxy to x11vnc', () => {
  // Without a password x11vnc has no TCP port: a test relay gives its unix socket one (x11vnc
  // answers its own WebSocket on the same socket).
  const upstreams = [
    ["x11vnc's own WebSocket (ws://)", () => `ws://127.0.0.1:${new URL(tcp.url).port}/`],
    ['x11vnc (tcp://)', () => tcp.url],
  ] as const;
  for (const [name, upstream] of upstreams) {
    it(`tcp:// and ws:// viewers to ${name}: both connections recorded exactly`, async () => {
      const dir = join(root, name.replace(/\W+/g, '-'));
      const proxy = await startRecordingProxy({ upstream: upstream(), dir });
      try {
        await checkSessionThroughProxy({ viewerUrl: proxy.url, upstream: upstream(), dir, index: 0, cdpUrl: desktop.cdpUrl, at: { x: 150, y: 90 } });
        await checkSessionThroughProxy({ viewerUrl: proxy.wsUrl, upstream: upstream(), dir, index: 1, cdpUrl: desktop.cdpUrl, at: { x: 420, y: 260 } });
        expect(proxy.connections).toBe(2);
        expect(proxy.lastError).toBeNull();
        expect(readManifest(dir).connections.map((c) => c.close_reason)).toEqual(['client closed', 'client closed']);
      } finally {
        await proxy.close();
      }
    });
  }
});
