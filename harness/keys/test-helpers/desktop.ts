/**
 * Test-only helpers for the real-desktop typing check: a throwaway Xvnc + matchbox + Chromium
 * showing a focused <textarea>, and a minimal RFB client that can only send KeyEvents.
 * The lead will replace the startup with `launchDesktop` from harness/desktop/.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { chromium, type Browser, type Page } from 'playwright-core';

/** A running Xvnc + Chromium pair with a page whose <textarea id="t"> has focus. */
export interface TypingDesktop {
  display: number;
  rfbPort: number;
  page: Page;
  close(): Promise<void>;
}

/** A port the OS just handed out (closed again; tiny race accepted in tests). */
async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
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

/** True once something accepts TCP connections on 127.0.0.1:port. */
async function portOpen(port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

const PAGE =
  'data:text/html,' +
  encodeURIComponent(
    '<!doctype html><meta charset="utf-8"><textarea id="t" autofocus style="width:100%;height:90vh"></textarea>' +
      '<script>window.keydowns=[];addEventListener("keydown",(e)=>keydowns.push(e.key),true)</script>',
  );

/** Start Xvnc on a free display, matchbox and Chromium (--app) showing a focused textarea. */
export async function startTypingDesktop(): Promise<TypingDesktop> {
  const procs: Array<Pick<ResultPromise, 'kill'> & PromiseLike<unknown>> = [];
  const dirs: string[] = [];
  let browser: Browser | undefined;
  const close = async (): Promise<void> => {
    try { await browser?.close(); } catch { /* already gone */ }
    // SIGTERM first so Xvnc removes its /tmp/.X<n>-lock and socket; SIGKILL after 3 s.
    for (const p of procs.reverse()) {
      try { p.kill('SIGTERM'); } catch { /* already gone */ }
      const timer = setTimeout(() => { try { p.kill('SIGKILL'); } catch { /* already gone */ } }, 3000);
      try { await p; } catch { /* killed */ }
      clearTimeout(timer);
    }
    for (const d of dirs) {
      try { rmSync(d, { recursive: true, force: true }); } catch { /* best effort */ }
    }
  };
  try {
    const rfbPort = await freePort();
    const opts = { reject: false, stdio: 'ignore', cleanup: true } as const;
    // -displayfd: Xvnc picks a free display itself and writes its number to fd 3.
    const xvnc = execa('Xvnc', ['-displayfd', '3', '-geometry', '1024x768', '-depth', '24', '-SecurityTypes', 'None',
      '-localhost', '-rfbport', String(rfbPort), '-AlwaysShared', '-nolisten', 'tcp'],
    { reject: false, cleanup: true, stdio: ['ignore', 'ignore', 'ignore', 'pipe'] });
    procs.push(xvnc);
    let fdText = '';
    xvnc.stdio[3]?.on('data', (d: Buffer) => { fdText += d.toString(); });
    const display = await waitFor('Xvnc display number', 10_000, () =>
      (/^\d+\n/.test(fdText) ? Number.parseInt(fdText, 10) : xvnc.exitCode !== null ? Promise.reject(new Error('Xvnc exited')) : undefined));
    await waitFor('Xvnc RFB port', 10_000, async () => ((await portOpen(rfbPort)) ? true : undefined));
    const env = { DISPLAY: `:${display}` };
    procs.push(execa('matchbox-window-manager', ['-use_titlebar', 'no', '-use_cursor', 'yes'], { ...opts, env }));
    const profile = mkdtempSync(join(tmpdir(), 'vncua-keys-'));
    dirs.push(profile);
    procs.push(execa('/usr/lib/chromium/chromium', ['--remote-debugging-port=0', '--remote-debugging-address=127.0.0.1',
      `--user-data-dir=${profile}`, '--no-sandbox', '--disable-gpu', '--no-first-run', '--no-default-browser-check',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage',
      '--ozone-platform=x11', '--password-store=basic', '--use-mock-keychain', '--disable-default-apps',
      '--disable-extensions', '--disable-features=Translate,MediaRouter,OptimizationHints', '--kiosk', `--app=${PAGE}`],
      { ...opts, env }));
    const cdpPort = await waitFor('Chromium DevToolsActivePort', 20_000, () => {
      try { return Number(readFileSync(join(profile, 'DevToolsActivePort'), 'utf8').split('\n')[0]) || undefined; }
      catch { return undefined; }
    });
    browser = await chromium.connectOverCDP(`http://127.0.0.1:${cdpPort}`);
    const b = browser;
    const page = await waitFor('the textarea page', 10_000, () =>
      b.contexts().flatMap((c) => c.pages()).find((p) => p.url().startsWith('data:')));
    await page.waitForSelector('#t');
    await waitFor('textarea focus', 10_000, async () =>
      (await page.evaluate(() => document.hasFocus() && document.activeElement?.id === 't')) ? true : undefined);
    return { display, rfbPort, page, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** A bare RFB 3.8 client (security None) that only sends KeyEvents. */
export interface KeyClient {
  key(keysym: number, down: boolean): void;
  /** Resolves once everything written so far has been handed to the kernel. */
  flush(): Promise<void>;
  close(): void;
}

/** Connect to 127.0.0.1:port, do the RFB 3.8 handshake with security None and a shared ClientInit. */
export async function connectKeyClient(port: number): Promise<KeyClient> {
  const sock: Socket = connect(port, '127.0.0.1');
  let buf = Buffer.alloc(0);
  let wake: (() => void) | undefined;
  let failure: Error | undefined;
  sock.on('data', (d) => { buf = Buffer.concat([buf, d]); wake?.(); });
  sock.on('error', (e) => { failure = e; wake?.(); });
  sock.on('close', () => { failure ??= new Error('RFB socket closed'); wake?.(); });
  const read = async (n: number): Promise<Buffer> => {
    while (buf.length < n) {
      if (failure) throw failure;
      await new Promise<void>((r) => (wake = r));
    }
    const out = buf.subarray(0, n);
    buf = buf.subarray(n);
    return out;
  };
  try {
    // ProtocolVersion: 12 bytes "RFB 003.00x\n"; we answer 3.8.
    await read(12);
    sock.write('RFB 003.008\n');
    // Security: u8 count, count × u8 type. We pick 1 (None), then SecurityResult u32 (0 = OK).
    const count = (await read(1)).readUInt8(0);
    const types = [...(await read(count))];
    if (!types.includes(1)) throw new Error(`server offers no security None: ${types.join(',')}`);
    sock.write(Buffer.from([1]));
    if ((await read(4)).readUInt32BE(0) !== 0) throw new Error('security handshake failed');
    // ClientInit: u8 shared-flag. ServerInit: u16 w, u16 h, 16-byte pixel format, u32 name length, name.
    sock.write(Buffer.from([1]));
    const init = await read(24);
    await read(init.readUInt32BE(20));
  } catch (e) {
    sock.destroy();
    throw e;
  }
  sock.on('data', () => { buf = Buffer.alloc(0); });
  return {
    key(keysym, down) {
      // KeyEvent: u8 type=4, u8 down-flag, 2 bytes padding, u32 keysym.
      const m = Buffer.alloc(8);
      m.writeUInt8(4, 0);
      m.writeUInt8(down ? 1 : 0, 1);
      m.writeUInt32BE(keysym >>> 0, 4);
      sock.write(m);
    },
    flush: () => new Promise((resolve, reject) => sock.write(Buffer.alloc(0), (e) => (e ? reject(e) : resolve()))),
    close: () => sock.destroy(),
  };
}
