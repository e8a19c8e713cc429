/**
 * Interoperability: the client against two real VNC servers (TigerVNC Xvnc, and
 * Xvfb + x11vnc), each running the real desktop with Chromium showing a realistic
 * page, forcing one encoding at a time. The decoded framebuffer must equal a ground
 * truth taken on the X side (`xwd -root`) pixel for pixel; for Tight with JPEG (lossy)
 * within a stated error. Each case also checks the server really used the encoding.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchDesktop, type Desktop, type VncServerKind } from '../desktop/index.ts';
import { connectVnc, type ConnectOptions, type VncClient } from './index.ts';
import { captureRoot, diffImages, type RgbaImage } from './test-helpers/xwd.ts';

const PAGE = readFileSync(fileURLToPath(new URL('../../bench/pages/dashboard.html', import.meta.url)));

interface Case {
  name: string;
  options: ConnectOptions;
  /** Encoding names that must appear in the client's rectStats(), one of them at least. */
  used: string[];
  /** Lossy: the mean absolute channel error must stay under this (exact otherwise). */
  meanError?: number;
}

const CASES: Case[] = [
  { name: 'Raw', options: { encodings: ['raw'] }, used: ['Raw'] },
  { name: 'CopyRect (+Raw)', options: { encodings: ['copyrect', 'raw'] }, used: ['Raw', 'CopyRect'] },
  { name: 'Hextile', options: { encodings: ['hextile'] }, used: ['Hextile'] },
  { name: 'ZRLE', options: { encodings: ['zrle'] }, used: ['ZRLE'] },
  { name: 'Tight (lossless)', options: { encodings: ['tight'] }, used: ['Tight'] },
  { name: 'Tight with JPEG', options: { encodings: ['tight'], jpegQuality: 8 }, used: ['Tight'], meanError: 2 },
  // Neither Debian server produces TightPNG (TigerVNC has no TightPNG encoder; Debian's libvncserver is built
  // without libpng), so both fall back to Raw here: the TightPNG decoder is covered by fixtures (tightpng.test.ts).
  { name: 'TightPNG (servers fall back to Raw)', options: { encodings: ['tightpng'], jpegQuality: 8 }, used: ['TightPNG', 'Raw'] },
  { name: 'default encodings', options: {}, used: ['Raw', 'Hextile', 'ZRLE', 'CopyRect'] },
];

let server: Server;
let pageUrl: string;

beforeAll(async () => {
  server = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(PAGE);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  pageUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

/** Mean absolute channel error between two images. */
function meanError(a: RgbaImage, b: RgbaImage): number {
  let sum = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    sum += Math.abs(a.data[i]! - b.data[i]!) + Math.abs(a.data[i + 1]! - b.data[i + 1]!) + Math.abs(a.data[i + 2]! - b.data[i + 2]!);
  }
  return sum / ((a.data.length / 4) * 3);
}

/** The client's framebuffer as an image (a copy). */
function fbImage(client: VncClient): RgbaImage {
  const fb = client.framebuffer;
  return { width: fb.width, height: fb.height, data: Uint8Array.from(fb.data) };
}

/** Wait until two xwd captures 300 ms apart are identical: the page has finished drawing. */
async function stableRoot(display: string, xauthority: string): Promise<RgbaImage> {
  let prev = await captureRoot(display, xauthority);
  for (let i = 0; i < 40; i++) {
    await new Promise((r) => setTimeout(r, 300));
    const next = await captureRoot(display, xauthority);
    if (diffImages(prev, next).count === 0) return next;
    prev = next;
  }
  throw new Error(`the screen of ${display} never stopped changing`);
}

for (const kind of ['xvnc', 'x11vnc'] as VncServerKind[]) {
  describe(`interop with ${kind}`, () => {
    let desktop: Desktop;
    let truth: RgbaImage;

    beforeAll(async () => {
      desktop = await launchDesktop({ server: kind, size: '1024x640', url: pageUrl });
      // TigerVNC draws the cursor into a viewer's picture while the pointer is somewhere that viewer did not
      // put it (a new viewer has "put" it at 0,0). xwd never shows the cursor, so park the pointer at 0,0.
      execFileSync('xdotool', ['mousemove', '0', '0'], { env: { ...process.env, DISPLAY: desktop.display, XAUTHORITY: desktop.xauthority } });
      // The page is drawn when its header gradient is on screen and nothing changes any more.
      for (;;) {
        truth = await stableRoot(desktop.display, desktop.xauthority);
        if (truth.data[4 * (truth.width * 10 + 500)]! < 100) break; // dark header row reached the screen
        await new Promise((r) => setTimeout(r, 200));
      }
    }, 120_000);

    afterAll(async () => {
      await desktop?.close();
    });

    for (const c of CASES) {
      it(`${c.name}: the decoded framebuffer equals xwd -root`, async () => {
        const client = await connectVnc(desktop.vncUrl, c.options);
        try {
          // The server may still be sending the first picture in several updates (x11vnc polls the screen): compare until equal or 5 s.
          let got = fbImage(client);
          const deadline = Date.now() + 5000;
          const good = () => (c.meanError === undefined ? diffImages(got, truth).count === 0 : meanError(got, truth) <= c.meanError);
          while (!good() && Date.now() < deadline) {
            await client.waitForUpdate({ timeoutMs: 1000 }).catch(() => {});
            got = fbImage(client);
          }
          const stats = client.rectStats();
          const d = diffImages(got, truth);
          const detail = `${kind} ${c.name}: ${d.count} pixels differ (max error ${d.maxError}, mean ${meanError(got, truth).toFixed(2)}), first ${JSON.stringify(d.first)}, rects ${JSON.stringify(stats)}`;
          if (process.env.VNCUA_DEBUG) console.log(detail);
          if (c.meanError === undefined) expect(d.count, detail).toBe(0);
          else {
            expect(meanError(got, truth), detail).toBeLessThanOrEqual(c.meanError);
            expect(d.maxError, `${detail}: a lossy case must really have gone through JPEG`).toBeGreaterThan(0);
          }
          expect(
            c.used.some((name) => (stats[name] ?? 0) > 0),
            `${detail}: expected rectangles in ${c.used.join(' or ')}`,
          ).toBe(true);
          // Whatever arrived, nothing outside what was asked for (plus Raw, which every server may fall back to, and pseudo-encodings).
          const allowed = new Set([...c.used, 'Raw', 'Cursor', 'DesktopSize', 'ExtendedDesktopSize', 'LastRect']);
          if (c.options.encodings)
            for (const e of c.options.encodings) allowed.add({ raw: 'Raw', copyrect: 'CopyRect', hextile: 'Hextile', zrle: 'ZRLE', tight: 'Tight', tightpng: 'TightPNG' }[e]);
          else for (const n of ['CopyRect', 'ZRLE', 'Hextile']) allowed.add(n);
          expect(
            Object.keys(stats).filter((n) => !allowed.has(n)),
            detail,
          ).toEqual([]);
        } finally {
          await client.close();
        }
      });
    }
  });
}
