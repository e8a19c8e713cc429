/**
 * Fidelity (issue 4 §3): on a real desktop, a live client records its session through the recording
 * proxy; at several quiet instants it takes screenshots (with and without the cursor) and notes now().
 * The replayed frame at each instant must equal the live screenshot pixel for pixel; a difference is
 * reported with its cause, computed from the recording (test-helpers/fidelity.ts).
 * Run for the default encodings (CopyRect/Hextile/Raw), Tight with JPEG, and ZRLE.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from '../../harness/agent/test-helpers/tcp-proxy.ts';
import { launchDesktop, type Desktop } from '../../harness/desktop/index.ts';
import { connectVnc, type ConnectOptions, type VncClient } from '../../harness/rfb/index.ts';
import { now } from '../../harness/trace/clock.ts';
import { ENC } from '../../harness/rfb/encodings/types.ts';
import { startRecordingProxy } from '../proxy/index.ts';
import { Replayer } from './replayer.ts';
import { compareShot, type LiveShot } from './test-helpers/fidelity.ts';
import { BOX, LINK, PAGE_BACKGROUND, serveBoxesPage } from './test-helpers/page.ts';

let page: { url: string; close(): Promise<void> };
let desktop: Desktop;
let tcp: TcpProxy;
let root: string;

beforeAll(async () => {
  page = await serveBoxesPage();
  root = await mkdtemp(join(tmpdir(), 'vncua-fidelity-'));
  desktop = await launchDesktop({ url: page.url });
  // Xvnc itself over plain TCP, as before: a test relay to its unix socket (no TCP port without a password).
  tcp = await startTcpProxy(`unix://${desktop.rfbSocket}`);
  // Wait until the page is on screen (its background colour at the top-left), so the first quiet instant is not mid-load.
  const probe = await connectVnc(desktop.vncUrl);
  try {
    const end = Date.now() + 20_000;
    while (Date.now() < end && probe.framebuffer.pixel(2, 2).slice(0, 3).join() !== PAGE_BACKGROUND.join()) await probe.waitForUpdate({ timeoutMs: 1000 }).catch(() => {});
    await quiet(probe, 500);
  } finally {
    await probe.close();
  }
}, 60_000);

afterAll(async () => {
  await tcp?.close();
  await desktop?.close();
  await page?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** Resolve once no update has arrived for `quietMs` (or after `capMs`). */
async function quiet(client: VncClient, quietMs = 400, capMs = 8000): Promise<void> {
  await client.waitForQuiet({ quietMs, timeoutMs: capMs });
}

async function click(client: VncClient, p: { x: number; y: number }): Promise<void> {
  client.pointerEvent(p.x, p.y, 0);
  client.pointerEvent(p.x, p.y, 1);
  client.pointerEvent(p.x, p.y, 0);
}

async function shots(client: VncClient, label: string): Promise<LiveShot[]> {
  const out: LiveShot[] = [];
  for (const cursor of [false, true]) {
    const askedAt = now();
    const s = await client.screenshot({ cursor, cache: false });
    const t = now();
    out.push({ label, askedAt, t, png: s.png, cursor, pointer: client.pointer ? { x: client.pointer.x, y: client.pointer.y } : null, shape: client.framebuffer.cursorShape });
  }
  return out;
}

const CONFIGS: Array<{ name: string; options: ConnectOptions; encoding: number }> = [
  { name: 'copyrect-hextile-raw (default)', options: {}, encoding: ENC.HEXTILE },
  { name: 'tight + JPEG quality 6', options: { encodings: ['tight'], jpegQuality: 6 }, encoding: ENC.TIGHT },
  { name: 'zrle', options: { encodings: ['zrle'] }, encoding: ENC.ZRLE },
];

describe('replayed frames equal the live client’s screenshots', () => {
  for (const cfg of CONFIGS) {
    it(`at quiet instants, with and without the cursor: ${cfg.name}`, async () => {
      const dir = join(root, cfg.name.replace(/\W+/g, '-'));
      const proxy = await startRecordingProxy({ upstream: tcp.url, dir });
      const taken: LiveShot[] = [];
      let client: VncClient | undefined;
      try {
        client = await connectVnc(proxy.url, cfg.options);
        client.pointerEvent(700, 560, 0);
        await quiet(client);
        taken.push(...(await shots(client, 'after connecting')));
        await click(client, BOX(1));
        await quiet(client);
        taken.push(...(await shots(client, 'after clicking box 1')));
        await click(client, BOX(6));
        await click(client, BOX(3));
        await quiet(client);
        taken.push(...(await shots(client, 'after clicking boxes 6 and 3')));
        client.pointerEvent(LINK.x, LINK.y, 0); // the hand cursor: a new Cursor pseudo-rectangle
        await quiet(client);
        taken.push(...(await shots(client, 'pointer over the link')));
      } finally {
        await client?.close();
        await proxy.close();
      }
      expect(taken).toHaveLength(8);
      const problems: string[] = [];
      for (const s of taken) {
        const p = await compareShot(dir, s);
        if (p) problems.push(p);
      }
      expect(problems).toEqual([]);
      // The recording really exercised this encoding and the Cursor pseudo-encoding (the hand over the link).
      const r = await Replayer.open(dir);
      await r.frameAt(taken.at(-1)!.t);
      expect(r.rectStats().get(cfg.encoding) ?? 0).toBeGreaterThan(0);
      expect(r.rectStats().get(ENC.CURSOR) ?? 0).toBeGreaterThan(0);
      expect(taken.at(-1)!.shape).not.toBeNull();

      // The comparison names the cause when pixels differ: the pre-click screenshot compared at the instant
      // after the click (as if the screenshot had been asked for before the click's update and the client had
      // not applied it), and the cursor drawn at the old position compared where the pointer had moved on.
      const [before, , after] = taken;
      const inFlight = await compareShot(dir, { ...before!, askedAt: before!.t, t: after!.t });
      expect(inFlight).toMatch(/cause: update in flight at that instant: .*the live image equals the replayed frame as of the moment the screenshot was asked for/);
      const moved = await compareShot(dir, { ...taken[3]!, t: taken.at(-1)!.t, askedAt: taken.at(-1)!.t });
      expect(moved).toMatch(/cursor position: live pointer \{"x":\d+,"y":\d+\}, replayed \{"x":80,/);
    }, 60_000);
  }
});
