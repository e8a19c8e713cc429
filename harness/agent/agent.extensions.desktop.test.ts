/**
 * currentUrl() on a real Xvnc desktop with Chromium (over CDP). (captureScreen() needs no X server:
 * agent.capture.test.ts runs it on the fake RFB desktop, as agent.hooks.test.ts runs the recording
 * hook, endRun() and attachMeta().)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEventsDesktop, tempOutputDir, type EventsDesktop } from './test-helpers/desktops.ts';
import { HookAgent } from './test-helpers/hook-agent.ts';

describe('Agent extensions on Xvnc', () => {
  let desktop: EventsDesktop;
  let out: { dir: string; remove(): Promise<void> };

  beforeAll(async () => {
    desktop = await startEventsDesktop('xvnc');
    out = await tempOutputDir();
  }, 90_000);
  afterAll(async () => {
    await desktop?.close();
    await out?.remove();
  });

  it('currentUrl() is the page', async () => {
    const urls: Array<string | null> = [];
    const r = await new HookAgent({ outputDir: out.dir, vncUrl: desktop.vncUrl, cdpUrl: desktop.cdpUrl, record: false }, async (a) => {
      urls.push(await a.currentUrl());
      return true;
    }).run();
    expect(r.status).toBe('finished');
    expect(urls).toEqual([desktop.pageUrl]);
  });
});
