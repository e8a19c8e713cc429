/**
 * A recording survives `kill -9` of the process running the proxy: everything relayed before a
 * quiet moment is on disk byte for byte, and a connection cut in the middle of heavy traffic
 * leaves a sound prefix (data before the time records that point at it). Real parts: a TigerVNC
 * Xvnc upstream, the proxy in a child Node process, raw RFB clients that keep every byte.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type XvncServer, startXvnc } from '../../harness/rfb/test-helpers/xvnc.ts';
import { RawRfbClient, expectSoundIndex, readManifest, readStream } from './test-helpers.ts';

const FIXTURE = fileURLToPath(new URL('./proxy-child.fixture.ts', import.meta.url));
let xvnc: XvncServer;
let root: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'vncua-proxy-crash-'));
  xvnc = await startXvnc({ geometry: '640x480' });
});

afterAll(async () => {
  await xvnc?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** Start the fixture; resolves with its proxy URL. */
async function startChild(dir: string, writes: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, `tcp://127.0.0.1:${xvnc.port}`, dir, writes], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`fixture exited with ${code}`)));
  });
  return { child, url: (JSON.parse(line) as { url: string }).url };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('kill -9 of the proxy process', () => {
  for (const writes of ['async', 'sync'] as const) {
    it(`${writes} writes: a quiet connection is complete on disk, one cut mid-traffic is a sound prefix`, async () => {
      const dir = join(root, writes);
      const { child, url } = await startChild(dir, writes);
      const exited = new Promise((r) => child.once('exit', r));
      const clients: RawRfbClient[] = [];
      try {
        // Connection 0: a frame and some input, then quiet.
        const quiet = await RawRfbClient.connect(url);
        clients.push(quiet);
        const frameBytes = 4 + 12 + quiet.width * quiet.height * 4;
        const afterInit = quiet.receivedBytes().length;
        quiet.pointer(10, 20, 0);
        quiet.pointer(10, 20, 1);
        quiet.pointer(10, 20, 0);
        quiet.requestFullFrame();
        await quiet.waitReceived(afterInit + frameBytes);
        // Connection 1: full frames asked for back to back, killed in the middle of the flow.
        const busy = await RawRfbClient.connect(url);
        clients.push(busy);
        await sleep(300);
        let flowing = true;
        void (async () => {
          for (let i = 0; flowing; i++) {
            busy.pointer(i % 640, (i * 7) % 480, 0);
            busy.requestFullFrame();
            await sleep(2);
          }
        })();
        await busy.waitReceived(8 * frameBytes, 30_000);
        child.kill('SIGKILL');
        await exited;
        flowing = false;
        await Promise.all(clients.map((c) => c.closed));

        const manifest = readManifest(dir);
        expect(manifest.connections.map((c) => [c.index, c.closed_at])).toEqual([
          [0, null],
          [1, null],
        ]);
        // Connection 0: everything, exactly.
        const s0 = readStream(dir, 'server', 0);
        const c0 = readStream(dir, 'client', 0);
        expect(s0.bytes.equals(quiet.receivedBytes())).toBe(true);
        expect(c0.bytes.equals(quiet.sentBytes())).toBe(true);
        const opened0 = manifest.connections[0]!.opened_at;
        expectSoundIndex(s0, { complete: true, fromMs: opened0 });
        expectSoundIndex(c0, { complete: true, fromMs: opened0 });
        // Connection 1: a sound prefix of what went through.
        const s1 = readStream(dir, 'server', 1);
        const c1 = readStream(dir, 'client', 1);
        const got = busy.receivedBytes();
        const common = Math.min(s1.bytes.length, got.length);
        expect(common).toBeGreaterThan(4 * frameBytes);
        expect(s1.bytes.subarray(0, common).equals(got.subarray(0, common))).toBe(true);
        const sent = busy.sentBytes();
        expect(c1.bytes.length).toBeLessThanOrEqual(sent.length);
        expect(c1.bytes.equals(sent.subarray(0, c1.bytes.length))).toBe(true);
        const opened1 = manifest.connections[1]!.opened_at;
        expectSoundIndex(s1, { complete: false, fromMs: opened1 });
        expectSoundIndex(c1, { complete: false, fromMs: opened1 });
        expect(s1.records.at(-1)!.end).toBeGreaterThan(4 * frameBytes);
        // Sync writes: whatever reached the viewer is on disk, but for the one chunk being handled at the kill.
        if (writes === 'sync') expect(got.length).toBeLessThanOrEqual(s1.bytes.length + 64 * 1024);
      } finally {
        for (const c of clients) c.close();
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    });
  }
});
