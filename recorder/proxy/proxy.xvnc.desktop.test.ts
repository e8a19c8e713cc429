/**
 * The recording proxy in front of a real desktop (TigerVNC Xvnc + Chromium, launchDesktop): our
 * client through the proxy over tcp:// and ws://, to the desktop's websockify (ws://) and to Xvnc
 * itself (tcp://, through a test relay to its unix socket); pictures equal a direct client's, clicks reach the page, and the recording holds
 * exactly what was relayed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchDesktop, type Desktop } from '../../harness/desktop/index.ts';
import { startTcpProxy, type TcpProxy } from '../../harness/agent/test-helpers/tcp-proxy.ts';
import { servePage } from '../../harness/desktop/test-helpers.ts';
import { startRecordingProxy } from './proxy.ts';
import { CLICK_PAGE, checkSessionThroughProxy, readManifest } from './test-helpers.ts';

let desktop: Desktop;
let tcp: TcpProxy;
let page: { url: string; close(): Promise<void> };
let root: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'vncua-proxy-xvnc-'));
  page = await servePage(CLICK_PAGE);
  desktop = await launchDesktop({ size: '800x600', url: page.url });
  tcp = await startTcpProxy(`unix://${desktop.rfbSocket}`);
});

afterAll(async () => {
  await tcp?.close();
  await desktop?.close();
  await page?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('through the proxy to Xvnc', () => {
  const upstreams = [
    ['websockify (ws://)', () => desktop.vncUrl],
    // Without a password Xvnc has no TCP port: a test relay gives its unix socket one.
    ['Xvnc (tcp://)', () => tcp.url],
  ] as const;
  for (const [name, upstream] of upstreams) {
    it(`tcp:// and ws:// viewers to ${name}: connection 0 and connection 1, both recorded exactly`, async () => {
      const dir = join(root, name.replace(/\W+/g, '-'));
      const proxy = await startRecordingProxy({ upstream: upstream(), dir });
      try {
        await checkSessionThroughProxy({ viewerUrl: proxy.url, upstream: upstream(), dir, index: 0, cdpUrl: desktop.cdpUrl, at: { x: 101, y: 77 } });
        await checkSessionThroughProxy({ viewerUrl: proxy.wsUrl, upstream: upstream(), dir, index: 1, cdpUrl: desktop.cdpUrl, at: { x: 333, y: 222 } });
        expect(proxy.connections).toBe(2);
        expect(proxy.lastError).toBeNull();
        expect(readManifest(dir).connections.map((c) => c.client_transport)).toEqual(['tcp', 'ws']);
      } finally {
        await proxy.close();
      }
    });
  }
});
