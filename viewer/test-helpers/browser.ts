/**
 * Test-only: what the Chromium-driven viewer tests share: the `vncua` CLI in a child process (to make
 * real runs with `vncua eval` and `vncua process`), Playwright's Chromium, a canvas's pixels as RGB, a
 * PNG's pixels as RGB, and the wait for a canvas to show an instant.
 */
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import sharp from 'sharp';
import { CHROMIUM_BIN } from '../../harness/cdp/test-helpers.ts';

/** The repository root. */
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** `vncua ARGS` in a child from the repository root: its exit code and output (stdout and stderr); rejects after `timeoutMs`. */
export function vncua(args: string[], timeoutMs = 240_000): Promise<{ code: number | null; out: string }> {
  return new Promise((res, rej) => {
    const p = spawn(process.execPath, [join(REPO, 'bin', 'vncua.js'), ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d));
    p.stderr.on('data', (d: Buffer) => (out += d));
    const timer = setTimeout(() => {
      p.kill('SIGKILL');
      rej(new Error(`vncua ${args[0]} did not exit within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    p.on('exit', (code) => {
      clearTimeout(timer);
      res({ code, out });
    });
  });
}

/** Playwright's Chromium (the system one, headless). */
export function launchViewerBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_BIN,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
  });
}

/** The pixels of the canvas `selector` as RGB. */
export async function canvasRgb(page: Page, selector = '#screen'): Promise<{ rgb: Buffer; width: number; height: number }> {
  const r = await page.evaluate((sel) => {
    const c = document.querySelector(sel) as HTMLCanvasElement;
    const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    const rgb = new Uint8Array((d.length / 4) * 3);
    for (let i = 0, j = 0; i < d.length; i += 4, j += 3) {
      rgb[j] = d[i]!;
      rgb[j + 1] = d[i + 1]!;
      rgb[j + 2] = d[i + 2]!;
    }
    let s = '';
    for (let i = 0; i < rgb.length; i += 0x8000) s += String.fromCharCode(...rgb.subarray(i, i + 0x8000));
    return { b64: btoa(s), width: c.width, height: c.height };
  }, selector);
  return { rgb: Buffer.from(r.b64, 'base64'), width: r.width, height: r.height };
}

/** A PNG's pixels as RGB. */
export async function pngRgb(file: string): Promise<Buffer> {
  return sharp(file).removeAlpha().raw().toBuffer();
}

/** Wait until the canvas `selector` shows the instant `t` (its data-t, set once the frame is painted). */
export async function waitShown(page: Page, t: number, selector = '#screen'): Promise<void> {
  await page.waitForFunction(
    ([want, sel]) => {
      const c = document.querySelector(sel) as HTMLCanvasElement;
      return c.dataset.t !== undefined && Math.abs(Number(c.dataset.t) - want) < 0.01 && c.dataset.frame !== undefined;
    },
    [t, selector] as const,
  );
}
