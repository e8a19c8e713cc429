/**
 * currentUrl() on a real Xvnc desktop with Chromium (over CDP). (captureScreen() needs no X server:
 * agent.capture.test.ts runs it on the fake RFB desktop, as agent.hooks.test.ts runs the recording
 * hook, endRun() and attachMeta().)
 */
import { describe, expect, it } from 'vitest';
import { useEventsDesktop } from './test-helpers/desktops.ts';
import { HookAgent } from './test-helpers/hook-agent.ts';

describe('Agent extensions on Xvnc', () => {
  const env = useEventsDesktop('xvnc');

  it('currentUrl() is the page', async () => {
    const { desktop } = env;
    const urls: Array<string | null> = [];
    const r = await new HookAgent({ outputDir: await env.out(), vncUrl: desktop.vncUrl, cdpUrl: desktop.cdpUrl, record: false }, async (a) => {
      urls.push(await a.currentUrl());
      return true;
    }).run();
    expect(r.status).toBe('finished');
    expect(urls).toEqual([desktop.pageUrl]);
  });
});
