/**
 * The client against QEMU's built-in VNC server (qemu-system-x86_64 -vnc), a server the desktop never
 * runs, over tcp and over QEMU's own WebSocket listener. The guest paints a smooth gradient
 * (test-helpers/qemu.ts). With `lossy=on` QEMU sends that gradient as gradient-filtered Tight
 * BasicCompression even under TightPNG, whose spec forbids it (its send_gradient_rect has no PNG path);
 * the client decodes it. Every decode must equal QEMU's own screendump pixel for pixel. A wrong
 * password gives QEMU's refusal reason without the NUL QEMU counts in its length.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isVncuaError } from '../errors.ts';
import { connectVnc, type ConnectOptions, type VncClient } from './index.ts';
import { gradientPixel, startQemuVnc, type QemuVnc } from './test-helpers/qemu.ts';
import { diffImages, type RgbaImage } from './test-helpers/xwd.ts';

function fbImage(client: VncClient): RgbaImage {
  const fb = client.framebuffer;
  return { width: fb.width, height: fb.height, data: Uint8Array.from(fb.data) };
}

/** Connect, and wait until the framebuffer equals `truth` (the first picture may come in several updates), at most 10 s. */
async function decodeOf(url: string, options: ConnectOptions, truth: RgbaImage): Promise<{ client: VncClient; diff: ReturnType<typeof diffImages> }> {
  const client = await connectVnc(url, options);
  const deadline = Date.now() + 10_000;
  let diff = diffImages(fbImage(client), truth);
  while (diff.count > 0 && Date.now() < deadline) {
    await client.waitForUpdate({ timeoutMs: 1000 }).catch(() => {});
    diff = diffImages(fbImage(client), truth);
  }
  return { client, diff };
}

/** QEMU's screen once the guest has painted the whole gradient (its last pixel). */
async function paintedScreen(q: QemuVnc): Promise<RgbaImage> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const img = await q.screendump();
    const o = (img.width * (img.height - 1) + img.width - 1) * 4;
    const last = [img.data[o], img.data[o + 1], img.data[o + 2]];
    if (img.width === 320 && img.height === 200 && last.join() === gradientPixel(319, 199).join()) return img;
    if (Date.now() > deadline) throw new Error(`QEMU never showed the painted gradient (screen ${img.width}x${img.height}, last pixel ${last.join()})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('QEMU VNC server, lossy=on', () => {
  let q: QemuVnc;
  let truth: RgbaImage;

  beforeAll(async () => {
    q = await startQemuVnc(['lossy=on']);
    truth = await paintedScreen(q);
  }, 60_000);

  afterAll(async () => {
    await q?.close();
  });

  it('the ground truth is the gradient the guest painted', () => {
    for (const [x, y] of [
      [0, 0],
      [100, 50],
      [319, 0],
      [0, 199],
      [200, 150],
    ] as const) {
      const o = (y * truth.width + x) * 4;
      expect([truth.data[o], truth.data[o + 1], truth.data[o + 2]], `(${x},${y})`).toEqual(gradientPixel(x, y));
    }
  });

  for (const transport of ['tcp', 'ws'] as const) {
    it(`TightPNG over ${transport}: QEMU's gradient-filtered rectangles decode pixel-exact`, async () => {
      const { client, diff } = await decodeOf(transport === 'tcp' ? q.tcpUrl : q.wsUrl, { encodings: ['tightpng'] }, truth);
      try {
        const kinds = client.tightStats();
        expect(diff.count, `${diff.count} pixels differ, first ${JSON.stringify(diff.first)}; tight kinds ${JSON.stringify(kinds)}`).toBe(0);
        expect(client.rectStats().TightPNG ?? 0).toBeGreaterThan(0);
        // What QEMU really sent: the gradient as BasicCompression with the gradient filter.
        expect(kinds.gradient ?? 0, JSON.stringify(kinds)).toBeGreaterThan(0);
        expect(client.closed).toBe(false);
      } finally {
        await client.close();
      }
    });

    for (const encodings of [['tight'], ['zrle'], ['hextile'], ['raw']] as const) {
      it(`${encodings[0]} over ${transport}: pixel-exact`, async () => {
        const { client, diff } = await decodeOf(transport === 'tcp' ? q.tcpUrl : q.wsUrl, { encodings: [...encodings] }, truth);
        try {
          expect(diff.count, `${diff.count} pixels differ, first ${JSON.stringify(diff.first)}; rects ${JSON.stringify(client.rectStats())}`).toBe(0);
          if (encodings[0] === 'tight') expect(client.tightStats().gradient ?? 0).toBeGreaterThan(0);
        } finally {
          await client.close();
        }
      });
    }
  }
});

describe('QEMU VNC server with a password', () => {
  let q: QemuVnc;

  beforeAll(async () => {
    q = await startQemuVnc(['password=on']);
    await q.qmp('set_password', { protocol: 'vnc', password: 'secret' });
  }, 60_000);

  afterAll(async () => {
    await q?.close();
  });

  for (const transport of ['tcp', 'ws'] as const) {
    it(`a wrong password over ${transport} is RFB_ERR_AUTH_FAILED with QEMU's reason, its trailing NUL stripped`, async () => {
      const err = await connectVnc(transport === 'tcp' ? q.tcpUrl : q.wsUrl, { password: 'wrong' }).then(
        async (c) => {
          await c.close();
          return null;
        },
        (e: unknown) => e,
      );
      expect(isVncuaError(err, 'RFB_ERR_AUTH_FAILED'), String(err)).toBe(true);
      const reason = (err as { details?: { reason?: unknown } }).details?.reason;
      expect(reason).toBe('Authentication failed');
      expect((err as Error).message).not.toContain('\0');
    });
  }

  it('the right password connects', async () => {
    const c = await connectVnc(q.tcpUrl, { password: 'secret' });
    try {
      expect(c.resolution().width).toBeGreaterThan(0);
    } finally {
      await c.close();
    }
  });
});
