/**
 * Test-only helpers for the real-desktop typing check: a desktop (launchDesktop) showing a
 * focused <textarea>, and the RFB client reduced to the KeyEvents the typing plans need.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import { launchDesktop } from '../../desktop/index.ts';
import { connectVnc } from '../../rfb/index.ts';

/** A running desktop whose page has a focused <textarea id="t">. */
export interface TypingDesktop {
  display: number;
  /** The X authority file X clients (xset, xmodmap) need. */
  xauthority: string;
  /** The desktop's VNC WebSocket URL (with its token). */
  vncUrl: string;
  page: Page;
  close(): Promise<void>;
}

/** Poll `check` every 25 ms until it returns a value or `timeoutMs` passes. */
async function waitFor<T>(what: string, timeoutMs: number, check: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const PAGE =
  'data:text/html,' +
  encodeURIComponent(
    '<!doctype html><meta charset="utf-8"><textarea id="t" autofocus style="width:100%;height:90vh"></textarea>' +
      '<script>window.keydowns=[];addEventListener("keydown",(e)=>keydowns.push(e.key),true)</script>',
  );

/** Start a desktop (Xvnc, matchbox, Chromium in kiosk mode) showing a focused textarea. */
export async function startTypingDesktop(): Promise<TypingDesktop> {
  const desktop = await launchDesktop({ size: '1024x768', url: PAGE });
  let browser: Browser | undefined;
  const close = async (): Promise<void> => {
    try {
      await browser?.close();
    } catch {
      // already gone
    }
    await desktop.close();
  };
  try {
    browser = await chromium.connectOverCDP(desktop.cdpUrl);
    const b = browser;
    const page = await waitFor('the textarea page', 10_000, () =>
      b
        .contexts()
        .flatMap((c) => c.pages())
        .find((p) => p.url().startsWith('data:')),
    );
    await page.waitForSelector('#t');
    await waitFor('textarea focus', 10_000, async () => ((await page.evaluate(() => document.hasFocus() && document.activeElement?.id === 't')) ? true : undefined));
    return { display: Number(desktop.display.slice(1)), xauthority: desktop.xauthority, vncUrl: desktop.vncUrl, page, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** The RFB client, reduced to KeyEvents. */
export interface KeyClient {
  key(keysym: number, down: boolean): void;
  /** Resolves once everything sent so far has left this process's queue. */
  flush(): Promise<void>;
  close(): void;
}

/** Connect the RFB client to the desktop's VNC endpoint (its WebSocket URL). */
export async function connectKeyClient(vncUrl: string): Promise<KeyClient> {
  const client = await connectVnc(vncUrl, { encodings: ['raw'] });
  return {
    key: (keysym, down) => client.keyEvent(keysym, down),
    // keyEvent hands its bytes to the socket synchronously; one turn of the event loop lets them go out.
    flush: () => new Promise((resolve) => setImmediate(resolve)),
    close: () => void client.close(),
  };
}
