/**
 * captureScreen() and currentUrl() on a real Xvnc desktop with Chromium. (The recording hook, endRun()
 * and attachMeta() need no X server: agent.hooks.test.ts runs them on the fake RFB desktop.)
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEventsDesktop, tempOutputDir, type EventsDesktop } from './test-helpers/desktops.ts';
import { HookAgent } from './test-helpers/hook-agent.ts';

describe('Agent extensions on Xvnc', () => {
  let desktop: EventsDesktop;
  const dirs: Array<{ dir: string; remove(): Promise<void> }> = [];
  const out = async () => {
    const d = await tempOutputDir();
    dirs.push(d);
    return d.dir;
  };

  beforeAll(async () => {
    desktop = await startEventsDesktop('xvnc');
  }, 90_000);
  afterAll(async () => {
    await desktop?.close();
    for (const d of dirs) await d.remove();
  });

  it('captureScreen() scales, encodes PNG or JPEG, and hashes equal screens equally; currentUrl() is the page', async () => {
    await desktop.reset();
    const dir = await out();
    const seen: Array<{ mime: string; w: number; h: number; sw: number; sh: number; hash: string; decoded: { width?: number; height?: number; format?: string } }> = [];
    let url: string | null = null;
    const r = await new HookAgent({ outputDir: dir, vncUrl: desktop.vncUrl, cdpUrl: desktop.cdpUrl, record: false }, async (a) => {
      for (const opts of [{ size: { width: 640, height: 400 } }, { format: 'jpeg' as const, quality: 60 }, {}, {}]) {
        const c = await a.captureScreen({ cursor: false, ...opts });
        const decoded = await sharp(Buffer.from(c.base64, 'base64')).metadata();
        seen.push({ mime: c.mimeType, w: c.width, h: c.height, sw: c.screenWidth, sh: c.screenHeight, hash: c.hash, decoded });
      }
      await desktop.page.evaluate(() => {
        document.body.style.background = 'rgb(200, 30, 40)';
      });
      await a.wait(0.5);
      const c = await a.captureScreen({ cursor: false });
      seen.push({ mime: c.mimeType, w: c.width, h: c.height, sw: c.screenWidth, sh: c.screenHeight, hash: c.hash, decoded: {} });
      url = await a.currentUrl();
      return true;
    }).run();
    expect(r.status).toBe('finished');
    const [small, jpeg, full1, full2, changed] = seen;
    expect(small).toMatchObject({ mime: 'image/png', w: 640, h: 400, sw: 1280, sh: 800 });
    expect(small!.decoded).toMatchObject({ width: 640, height: 400, format: 'png' });
    expect(jpeg).toMatchObject({ mime: 'image/jpeg', w: 1280, h: 800 });
    expect(jpeg!.decoded.format).toBe('jpeg');
    expect(full1!.hash).toBe(full2!.hash);
    expect(full1!.hash).not.toBe(small!.hash);
    expect(changed!.hash).not.toBe(full1!.hash);
    expect(url).toBe(desktop.pageUrl);
    expect(JSON.parse(await readFile(join(dir, 'execution.json'), 'utf8'))).toHaveLength(1);
    await desktop.page.evaluate(() => {
      document.body.style.background = '';
    });
  });
});
