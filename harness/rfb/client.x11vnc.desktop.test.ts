/**
 * Interoperability with a second, LibVNCServer-based server: x11vnc on Xvfb, over
 * tcp:// with every encoding and over its built-in WebSocket (which needs an Origin header).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectVnc } from './client.ts';
import type { EncodingName } from './encodings/index.ts';
import { PATTERN_COLOURS, expectPattern, tileXbm } from './test-helpers/pattern.ts';
import { type X11vncServer, startX11vnc } from './test-helpers/xvnc.ts';

let dir: string;
let server: X11vncServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vncua-x11vnc-'));
  writeFileSync(join(dir, 'tile.xbm'), tileXbm());
  server = await startX11vnc({ geometry: '320x200' });
  await server.x('xsetroot', ['-bitmap', join(dir, 'tile.xbm'), ...PATTERN_COLOURS]);
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('x11vnc', () => {
  const sets: Array<EncodingName[] | undefined> = [undefined, ['raw'], ['copyrect', 'hextile'], ['zrle'], ['tight']];
  for (const encodings of sets) {
    it(`tcp:// with ${encodings?.join('+') ?? 'the default encodings'} shows the exact picture`, async () => {
      const client = await connectVnc(`tcp://127.0.0.1:${server.port}`, encodings ? { encodings } : {});
      try {
        expect(client.resolution()).toEqual({ width: 320, height: 200 });
        expectPattern(client.framebuffer);
      } finally {
        await client.close();
      }
    });
  }

  it('connects through its built-in WebSocket (Origin header sent) and moves the pointer', async () => {
    const client = await connectVnc(`ws://127.0.0.1:${server.port}/`, { encodings: ['hextile'] });
    try {
      expectPattern(client.framebuffer);
      client.pointerEvent(77, 33, 0);
      let where = '';
      for (let i = 0; i < 100 && !where.startsWith('x:77 y:33'); i++) {
        where = await server.x('xdotool', ['getmouselocation']);
        if (!where.startsWith('x:77 y:33')) await new Promise((r) => setTimeout(r, 20));
      }
      expect(where).toMatch(/^x:77 y:33 /);
    } finally {
      await client.close();
    }
  });
});
