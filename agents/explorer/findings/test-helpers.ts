/**
 * Test helpers for the findings monitor without the exploring loop: an ObserverContext whose screenshots are CDP
 * captures of the browser's first page, a driver socket on that page, and ExplorerStep records.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { timeoutSignal } from '../../../harness/cancel.ts';
import { pageTargets, PageSocket } from '../../../harness/cdp/page-socket.ts';
import type { ExplorerStep, ObserverContext } from '../types.ts';

/** An ObserverContext over a browser's CDP endpoint: screenshot() saves a CDP capture of the first page (3 s at most). */
export function cdpContext(cdpUrl: string, outputDir: string, signal: AbortSignal): ObserverContext {
  return {
    cdpUrl,
    outputDir,
    signal,
    async screenshot(name: string) {
      const s = signal;
      const [t] = await pageTargets(cdpUrl, { signal: s, timeoutMs: 3000 });
      const socket = await PageSocket.open(t!.webSocketDebuggerUrl!, timeoutSignal(s, 3000));
      try {
        const shot = await socket.send<{ data: string }>('Page.captureScreenshot', { format: 'png' }, timeoutSignal(s, 3000));
        const rel = `findings/${name}.png`;
        await mkdir(join(outputDir, 'findings'), { recursive: true });
        await writeFile(join(outputDir, rel), Buffer.from(shot.data, 'base64'));
        return rel;
      } finally {
        socket.close();
      }
    },
  };
}

/** A socket on the browser's first page, to drive it (evaluate, navigate, crash). */
export async function driverSocket(cdpUrl: string, signal: AbortSignal): Promise<PageSocket> {
  const [t] = await pageTargets(cdpUrl, { signal });
  return PageSocket.open(t!.webSocketDebuggerUrl!, signal);
}

/** Evaluate `expression` in the driven page, as from a user's gesture (window.open works); returns by value, throws what the expression threw. */
export async function evaluate(s: PageSocket, expression: string, signal: AbortSignal): Promise<unknown> {
  const r = await s.send<{ result?: { value?: unknown }; exceptionDetails?: { text?: string; exception?: { description?: string } } }>(
    'Runtime.evaluate',
    { expression, returnByValue: true, userGesture: true },
    timeoutSignal(signal, 10_000),
  );
  if (r.exceptionDetails) throw new Error(`${expression}: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
  return r.result?.value;
}

/** An ExplorerStep record for step `n` (a click the test made itself). */
export function stepRecord(n: number, frameHash: string, url: string | null = null): ExplorerStep {
  return { step: n, action: { action: 'mouse_click', params: {} }, layer: 'heuristic', strategy: 'test', progress: true, url, frameHash, atMs: n * 1000 };
}
