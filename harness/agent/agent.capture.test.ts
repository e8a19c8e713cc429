/**
 * captureScreen() on the fake RFB desktop (no X server, no browser): scaling, PNG or JPEG, and the hash
 * (equal screens hash equally, a changed screen does not); currentUrl() is null without a cdpUrl. currentUrl()
 * of a page: agent.extensions.desktop.test.ts.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { expect, it } from 'vitest';
import { useFakeRuns } from './test-helpers/fake-run.ts';
import { HookAgent } from './test-helpers/hook-agent.ts';

const t = useFakeRuns();

it('captureScreen() scales, encodes PNG or JPEG, and hashes equal screens equally', async () => {
  // Moving the pointer to the top left corner repaints the screen red.
  const desktop = await t.desktop({
    width: 640,
    height: 400,
    background: [30, 60, 90],
    onInput: (e, d) => {
      if (e.kind === 'pointer' && e.x === 0 && e.y === 0) d.fill([200, 30, 40]);
    },
  });
  desktop.paint(100, 100, 200, 50, [250, 250, 250]);
  const dir = await t.out();
  const seen: Array<{ mime: string; w: number; h: number; sw: number; sh: number; hash: string; decoded: { width?: number; height?: number; format?: string } }> = [];
  let url: string | null | undefined;
  const r = await new HookAgent({ outputDir: dir, vncUrl: desktop.vncUrl, record: false }, async (a) => {
    for (const opts of [{ size: { width: 320, height: 200 } }, { format: 'jpeg' as const, quality: 60 }, {}, {}]) {
      const c = await a.captureScreen({ cursor: false, ...opts });
      const decoded = await sharp(Buffer.from(c.base64, 'base64')).metadata();
      seen.push({ mime: c.mimeType, w: c.width, h: c.height, sw: c.screenWidth, sh: c.screenHeight, hash: c.hash, decoded });
    }
    // A changed screen hashes differently.
    await a.mouseMove({ x: 0, y: 0 });
    expect((await a.waitForInputEffects({ changeTimeoutMs: 10_000 })).changed).toBe(true);
    const c = await a.captureScreen({ cursor: false });
    seen.push({ mime: c.mimeType, w: c.width, h: c.height, sw: c.screenWidth, sh: c.screenHeight, hash: c.hash, decoded: {} });
    url = await a.currentUrl();
    return true;
  }).run();
  expect(r.status).toBe('finished');
  const [small, jpeg, full1, full2, changed] = seen;
  expect(small).toMatchObject({ mime: 'image/png', w: 320, h: 200, sw: 640, sh: 400 });
  expect(small!.decoded).toMatchObject({ width: 320, height: 200, format: 'png' });
  expect(jpeg).toMatchObject({ mime: 'image/jpeg', w: 640, h: 400 });
  expect(jpeg!.decoded.format).toBe('jpeg');
  expect(full1).toMatchObject({ mime: 'image/png', w: 640, h: 400 });
  expect(full1!.decoded).toMatchObject({ width: 640, height: 400, format: 'png' });
  expect(full1!.hash).toBe(full2!.hash);
  expect(full1!.hash).not.toBe(small!.hash);
  expect(changed!.hash).not.toBe(full1!.hash);
  // No cdpUrl: no page to ask.
  expect(url).toBeNull();
  // Captures are not actions: the trace holds the move only.
  expect(JSON.parse(await readFile(join(dir, 'execution.json'), 'utf8'))).toHaveLength(1);
});
