/**
 * Through the recording proxy, a VNC endpoint that cannot be reached fails the client exactly as a
 * direct connection would (same code), naming the user's URL, never the proxy's 127.0.0.1 port:
 * a refused tcp:// and ws:// upstream (RFB_ERR_CONNECT with ECONNREFUSED), a ws:// upstream refusing
 * the upgrade, a tcp:// upstream that accepts and never speaks and a ws:// one that never answers the
 * upgrade (RFB_ERR_TIMEOUT, whichever of the client and the proxy gives up first). And an Agent run
 * with recording on (the recorder option: recordingProxyRecorder) ends with that error in result.json.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AgentConnection } from '../../harness/agent/connection.ts';
import { ScriptAgent } from '../../harness/agent/test-helpers/desktops.ts';
import { closedPort } from '../../harness/cdp/test-helpers.ts';
import { isVncuaError } from '../../harness/errors.ts';
import { connectVnc } from '../../harness/rfb/index.ts';
import { redactUrl } from '../../harness/redact.ts';
import { parseVncUrl } from '../../harness/rfb/transport.ts';
import { readResult } from '../../harness/trace/reader.ts';
import { recordingProxyRecorder as recorder } from '../recorder-factory.ts';
import { startRecordingProxy, type RecordingProxy } from './proxy.ts';

let dir: string;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-direct-errors-'));
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A server that takes TCP connections and never sends a byte (nor answers an HTTP upgrade). */
async function silentServer(): Promise<number> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  );
  return (server.address() as net.AddressInfo).port;
}

async function proxyTo(upstream: string, connectTimeoutMs?: number): Promise<RecordingProxy> {
  const proxy = await startRecordingProxy({ upstream, dir: join(dir, `rec-${Math.random().toString(36).slice(2)}`), connectTimeoutMs });
  cleanups.push(() => proxy.close());
  return proxy;
}

/** The error connecting to `upstream` gives: directly, and through a proxy as the Agent connects (redirected). */
async function bothWays(upstream: string, clientTimeoutMs: number, proxyConnectTimeoutMs?: number) {
  const direct = await connectVnc(upstream, { timeoutMs: clientTimeoutMs }).catch((e: unknown) => e);
  const proxy = await proxyTo(upstream, proxyConnectTimeoutMs);
  const conn = new AgentConnection({ url: upstream, timeoutMs: clientTimeoutMs });
  conn.redirect(proxy.url, proxy);
  const viaProxy = await conn.driver().catch((e: unknown) => e);
  expect(isVncuaError(direct), String(direct)).toBe(true);
  expect(isVncuaError(viaProxy), String(viaProxy)).toBe(true);
  return { direct: direct as { code: string; message: string }, viaProxy: viaProxy as { code: string; message: string; details?: Record<string, unknown> }, proxy };
}

/** The proxy's own address must not be what the error names. */
function expectNamesUpstream(e: { message: string; details?: Record<string, unknown> }, upstream: string, proxy: RecordingProxy): void {
  expect(e.message).toContain(upstream);
  expect(e.message).not.toContain(proxy.url);
  expect(e.message).not.toContain(proxy.url.replace('tcp://', ''));
  expect(e.details?.url).toBe(redactUrl(parseVncUrl(upstream).href));
}

describe('through the recording proxy, an unreachable VNC endpoint fails as a direct connection would', () => {
  for (const scheme of ['tcp', 'ws'] as const) {
    it(`a refused ${scheme}:// upstream is RFB_ERR_CONNECT with ECONNREFUSED, naming the user's URL`, async () => {
      const upstream = `${scheme}://127.0.0.1:${await closedPort()}`;
      const { direct, viaProxy, proxy } = await bothWays(upstream, 5000);
      expect([direct.code, viaProxy.code]).toEqual(['RFB_ERR_CONNECT', 'RFB_ERR_CONNECT']);
      expectNamesUpstream(viaProxy, upstream, proxy);
      expect(viaProxy.message).toContain('ECONNREFUSED');
      // The proxy still keeps its own account in recording.json.
      expect(proxy.lastError?.code).toBe('RECORDER_ERR_UPSTREAM_CONNECT');
    });
  }

  it("a ws:// upstream that refuses the WebSocket upgrade is RFB_ERR_CONNECT naming the user's URL", async () => {
    const server = http.createServer((_q, res) => res.writeHead(404).end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const upstream = `ws://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    const { direct, viaProxy, proxy } = await bothWays(upstream, 5000);
    expect([direct.code, viaProxy.code]).toEqual(['RFB_ERR_CONNECT', 'RFB_ERR_CONNECT']);
    expectNamesUpstream(viaProxy, upstream, proxy);
    expect(viaProxy.message).toContain('404');
  });

  it("a tcp:// upstream that accepts and never speaks is RFB_ERR_TIMEOUT naming the user's URL", async () => {
    const upstream = `tcp://127.0.0.1:${await silentServer()}`;
    const { direct, viaProxy, proxy } = await bothWays(upstream, 1000);
    expect([direct.code, viaProxy.code]).toEqual(['RFB_ERR_TIMEOUT', 'RFB_ERR_TIMEOUT']);
    expectNamesUpstream(viaProxy, upstream, proxy);
  });

  it("a ws:// upstream that never answers the upgrade is RFB_ERR_TIMEOUT naming the user's URL, whoever gives up first", async () => {
    const upstream = `ws://127.0.0.1:${await silentServer()}`;
    // The client gives up first (the proxy would wait 10 s).
    const a = await bothWays(upstream, 1000);
    expect([a.direct.code, a.viaProxy.code]).toEqual(['RFB_ERR_TIMEOUT', 'RFB_ERR_TIMEOUT']);
    expectNamesUpstream(a.viaProxy, upstream, a.proxy);
    // The proxy gives up first (300 ms) and closes the client: its dial timeout is reported.
    const b = await bothWays(upstream, 5000, 300);
    expect(b.viaProxy.code).toBe('RFB_ERR_TIMEOUT');
    expectNamesUpstream(b.viaProxy, upstream, b.proxy);
    expect(b.viaProxy.message).toContain('300 ms');
  });
});

describe('an Agent run with recording on', () => {
  it("ends with RFB_ERR_CONNECT naming the desktop's VNC URL when it refuses (result.json)", async () => {
    const vncUrl = `ws://127.0.0.1:${await closedPort()}`;
    const outputDir = join(dir, 'agent-run');
    const agent = new ScriptAgent({ outputDir, vncUrl, cdpUrl: `http://127.0.0.1:${await closedPort()}`, task: 'look', recorder }, async (a) => a.screenshot());
    const result = await agent.run({ maxSteps: 1 });
    expect(result.status).toBe('error');
    expect(result.error?.code).toBe('RFB_ERR_CONNECT');
    expect(result.error?.message).toContain(vncUrl);
    expect(result.error?.message).toContain('ECONNREFUSED');
    expect(result.error?.message).not.toMatch(/tcp:\/\/127\.0\.0\.1/);
    expect(await readResult(outputDir)).toEqual(result);
  });
});
